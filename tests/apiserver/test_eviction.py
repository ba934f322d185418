"""The pods/eviction subresource and PodDisruptionBudgets, over raw HTTP against the in-process
server (no disruption controller: each test writes the budget's status itself): an allowed
eviction charges the budget, a spent one is refused with upstream's 429, a dry run charges
nothing, two budgets for one pod are a 500, and unready pods pass under AlwaysAllow or a healthy
IfHealthyBudget budget without being charged; an evicted pod carries the DisruptionTarget condition
(EvictionByEvictionAPI) written before the delete, with the delete's preconditions checked first.
"""

from __future__ import annotations

from typing import Any

from tests.conftest import InProcess

PODS = "/api/v1/namespaces/default/pods"
PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
MERGE = {"Content-Type": "application/merge-patch+json"}
HOLD = "example.com/hold"  # keeps an evicted pod readable (an unscheduled pod goes at once)


async def _running_pod(api: InProcess, name: str, app: str, ready: bool = True, finalizers: tuple[str, ...] = ()) -> None:
    meta: dict[str, Any] = {"name": name, "labels": {"app": app}, **({"finalizers": list(finalizers)} if finalizers else {})}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    assert (await api.request("POST", PODS, json=pod))[0] == 201
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    assert (await api.request("PATCH", f"{PODS}/{name}/status", json={"status": status}, headers=MERGE))[0] == 200


async def _budget(api: InProcess, name: str, app: str, allowed: int, healthy: int = 2, desired: int = 2,
                  **spec: Any) -> None:
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
           "spec": {"selector": {"matchLabels": {"app": app}}, "minAvailable": desired, **spec}}
    assert (await api.request("POST", PDBS, json=pdb))[0] == 201
    status = {"observedGeneration": 1, "disruptionsAllowed": allowed, "currentHealthy": healthy,
              "desiredHealthy": desired, "expectedPods": healthy}
    assert (await api.request("PATCH", f"{PDBS}/{name}/status", json={"status": status}, headers=MERGE))[0] == 200


async def _evict(api: InProcess, pod: str, query: str = "") -> tuple[int, Any]:
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod}}
    status, body, _ = await api.request("POST", f"{PODS}/{pod}/eviction{query}", json=eviction)
    return status, body


async def test_an_allowed_eviction_charges_the_budget_and_the_next_is_refused(api: InProcess) -> None:
    await _running_pod(api, "a1", "a")
    await _running_pod(api, "a2", "a")
    await _budget(api, "a", "a", allowed=1, healthy=2, desired=1)

    assert (await _evict(api, "a1"))[0] == 201
    pdb = (await api.request("GET", f"{PDBS}/a"))[1]["status"]
    assert pdb["disruptionsAllowed"] == 0 and list(pdb["disruptedPods"]) == ["a1"]
    assert [(c["type"], c["status"], c["reason"]) for c in pdb["conditions"]] == \
        [("DisruptionAllowed", "False", "InsufficientPods")]

    status, body = await _evict(api, "a2")
    assert status == 429 and body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert body["details"]["causes"] == [{"reason": "DisruptionBudget",
                                          "message": "The disruption budget a needs 1 healthy pods and has 2 currently"}]
    assert (await api.request("GET", f"{PODS}/a2"))[0] == 200


async def test_a_dry_run_eviction_charges_nothing_and_deletes_nothing(api: InProcess) -> None:
    await _running_pod(api, "d1", "d")
    await _budget(api, "d", "d", allowed=1)

    assert (await _evict(api, "d1", "?dryRun=All"))[0] == 201
    assert (await api.request("GET", f"{PDBS}/d"))[1]["status"]["disruptionsAllowed"] == 1
    assert (await api.request("GET", f"{PODS}/d1"))[0] == 200


async def test_a_pod_under_two_budgets_cannot_be_evicted(api: InProcess) -> None:
    await _running_pod(api, "t1", "t")
    await _budget(api, "t-one", "t", allowed=1)
    await _budget(api, "t-two", "t", allowed=1)

    status, body = await _evict(api, "t1")
    assert status == 500 and body["message"] == ("Internal error occurred: This pod has more than one "
                                                 "PodDisruptionBudget, which the eviction subresource does not support.")


async def test_an_unready_pod_passes_a_healthy_budget_without_charging_it(api: InProcess) -> None:
    await _running_pod(api, "u1", "u", ready=False)
    await _budget(api, "u", "u", allowed=0, healthy=2, desired=2)

    assert (await _evict(api, "u1"))[0] == 201
    assert "disruptedPods" not in (await api.request("GET", f"{PDBS}/u"))[1]["status"]


async def test_an_unready_pod_of_an_unhealthy_budget_needs_always_allow(api: InProcess) -> None:
    await _running_pod(api, "s1", "s", ready=False)
    await _budget(api, "s", "s", allowed=0, healthy=1, desired=2)
    assert (await _evict(api, "s1"))[0] == 429

    await _running_pod(api, "w1", "w", ready=False)
    await _budget(api, "w", "w", allowed=0, healthy=1, desired=2, unhealthyPodEvictionPolicy="AlwaysAllow")
    assert (await _evict(api, "w1"))[0] == 201


def _disruption(pod: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c["reason"], c["message"]) for c in pod["status"].get("conditions") or []
            if c["type"] == "DisruptionTarget"]


async def test_an_evicted_pod_gets_the_disruption_target_condition_before_it_goes(api: InProcess) -> None:
    await _running_pod(api, "d1", "d", finalizers=(HOLD,))
    assert (await _evict(api, "d1"))[0] == 201

    status, pod, _ = await api.request("GET", f"{PODS}/d1")  # held by the finalizer, terminating
    assert status == 200 and pod["metadata"]["deletionTimestamp"]
    assert _disruption(pod) == [("DisruptionTarget", "True", "EvictionByEvictionAPI", "Eviction API: evicting")]
    condition = next(c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert condition["lastTransitionTime"] and condition["lastProbeTime"] is None


async def test_a_dry_run_eviction_writes_no_condition(api: InProcess) -> None:
    await _running_pod(api, "d2", "d")
    assert (await _evict(api, "d2", "?dryRun=All"))[0] == 201
    assert _disruption((await api.request("GET", f"{PODS}/d2"))[1]) == []


async def test_eviction_preconditions_are_checked_before_the_condition_and_follow_its_write(api: InProcess) -> None:
    await _running_pod(api, "d3", "d", finalizers=(HOLD,))
    pod = (await api.request("GET", f"{PODS}/d3"))[1]
    stale = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "d3"},
             "deleteOptions": {"preconditions": {"resourceVersion": "1"}}}
    status, body, _ = await api.request("POST", f"{PODS}/d3/eviction", json=stale)
    assert status == 409 and body["reason"] == "Conflict"
    assert _disruption((await api.request("GET", f"{PODS}/d3"))[1]) == []

    current = {**stale, "deleteOptions": {"preconditions": {"resourceVersion": pod["metadata"]["resourceVersion"],
                                                            "uid": pod["metadata"]["uid"]}}}
    assert (await api.request("POST", f"{PODS}/d3/eviction", json=current))[0] == 201
    after = (await api.request("GET", f"{PODS}/d3"))[1]
    assert after["metadata"]["deletionTimestamp"] and _disruption(after)
