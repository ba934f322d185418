"""The Deployment controller: the pure parts as tables (the template hash, maxSurge/maxUnavailable
rounding, proportional scaling, revision annotations, condition transitions), then against a real
API server in-process with the ReplicaSet controller and a stand-in kubelet that binds pods and
marks them Ready: a rollout creates `<name>-<hash>` with upstream's annotations, conditions and
ScalingReplicaSet events; a new template rolls within maxSurge/maxUnavailable; Recreate scales the
old ReplicaSet to zero first; old revisions beyond revisionHistoryLimit are deleted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from client import errors
from client.resources import DEPLOYMENTS, EVENTS, PODS, REPLICASETS
from controllers import deployment_conditions as conditions
from controllers import deployment_revisions as revisions
from controllers import pod_states, rollout_math, template_hash
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

# -- the hash ---------------------------------------------------------------------------------

HASH_CASES = [
    ("FNV-32a of the empty input is the offset basis", b"", 0x811C9DC5),
    ("FNV-32a of 'a' is the published test vector", b"a", 0xE40C292C),
    ("FNV-32a of 'foobar' is the published test vector", b"foobar", 0xBF9CF968),
]


@pytest.mark.parametrize("data, want", [c[1:] for c in HASH_CASES], ids=[c[0] for c in HASH_CASES])
def test_fnv32a(data: bytes, want: int) -> None:
    assert template_hash.fnv32a(data) == want


def test_safe_encode_maps_digits_away_from_vowels_and_look_alikes() -> None:
    # '0' is 48 → 48 % 27 = 21 → '4'; '9' is 57 → 3 → 'f'
    assert template_hash.safe_encode("0123456789") == "456789bcdf"


TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}


def test_the_hash_is_stable_changes_with_the_template_and_with_the_collision_count() -> None:
    first = template_hash.compute(TEMPLATE)
    assert first == template_hash.compute({"spec": TEMPLATE["spec"], "metadata": TEMPLATE["metadata"]})
    assert set(first) <= set("bcdfghjklmnpqrstvwxz2456789") and 1 <= len(first) <= 10
    other = {**TEMPLATE, "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}
    assert template_hash.compute(other) != first
    assert template_hash.compute(TEMPLATE, 1) != first != template_hash.compute(TEMPLATE, 0)


def test_templates_equal_but_for_the_hash_label_are_equal() -> None:
    hashed = {**TEMPLATE, "metadata": {"labels": {"app": "web", "pod-template-hash": "abc"}}}
    assert template_hash.equal_ignoring_hash(hashed, TEMPLATE)
    assert not template_hash.equal_ignoring_hash(hashed, {**TEMPLATE, "metadata": {"labels": {"app": "api"}}})


# -- surge and unavailability -------------------------------------------------------------------

def _deploy(replicas: int, surge: Any = "25%", unavailable: Any = "25%", kind: str = "RollingUpdate") -> dict[str, Any]:
    strategy: dict[str, Any] = {"type": kind}
    if kind == "RollingUpdate":
        strategy["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    return {"metadata": {"name": "d", "generation": 1}, "spec": {"replicas": replicas, "strategy": strategy}}


FENCEPOST_CASES = [
    ("25% of 10 rounds surge up to 3 and unavailable down to 2", _deploy(10), 3, 2),
    ("25% of 1 surges by 1 and allows none unavailable", _deploy(1), 1, 0),
    ("25% of 3 surges by 1 and allows none unavailable", _deploy(3), 1, 0),
    ("25% of 4 is exactly 1 each", _deploy(4), 1, 1),
    ("both zero after rounding makes one unavailable", _deploy(3, "0%", "10%"), 0, 1),
    ("absolute numbers are taken as they are", _deploy(5, 2, 1), 2, 1),
    ("unavailability is capped at the replica count", _deploy(2, 0, 5), 0, 2),
    ("no replicas means nothing unavailable", _deploy(0), 0, 0),
    ("Recreate has neither", _deploy(5, kind="Recreate"), 0, 0),
]


@pytest.mark.parametrize("d, surge, unavailable", [c[1:] for c in FENCEPOST_CASES], ids=[c[0] for c in FENCEPOST_CASES])
def test_surge_and_unavailable(d: dict[str, Any], surge: int, unavailable: int) -> None:
    assert (rollout_math.max_surge(d), rollout_math.max_unavailable(d)) == (surge, unavailable)


def _rs(replicas: int, max_replicas: int | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"rs-{replicas}"}
    if max_replicas is not None:
        meta["annotations"] = {revisions.MAX_REPLICAS: str(max_replicas)}
    return {"metadata": meta, "spec": {"replicas": replicas}}


NEW_RS_CASES = [
    ("a first ReplicaSet of a rolling Deployment grows to the replica count", _deploy(10), [], 0, 10),
    ("the new ReplicaSet grows by the room maxSurge leaves", _deploy(10), [10], 0, 3),
    ("no room above replicas + maxSurge means no growth", _deploy(10), [13], 0, 0),
    ("growth stops at the replica count", _deploy(10), [1], 9, 10),
    ("Recreate goes straight to the replica count", _deploy(4, kind="Recreate"), [4], 0, 4),
]


@pytest.mark.parametrize("d, old, current, want", [c[1:] for c in NEW_RS_CASES], ids=[c[0] for c in NEW_RS_CASES])
def test_new_replica_set_size(d: dict[str, Any], old: list[int], current: int, want: int) -> None:
    new = _rs(current)
    assert rollout_math.new_rs_replicas(d, [_rs(n) for n in old] + [new], new) == want


PROPORTION_CASES = [
    ("scaling 10 → 20 mid-rollout grows each ReplicaSet by its share of 13 → 25", _deploy(20), [(8, 13), (5, 13)], [15, 10]),
    ("scaling down to zero empties everything", _deploy(0), [(6, 13), (7, 13)], [0, 0]),
    ("rounding leftovers go to the first (largest) ReplicaSet", _deploy(5, 0, 1), [(2, 3), (1, 3)], [3, 2]),
]


@pytest.mark.parametrize("d, sets, want", [c[1:] for c in PROPORTION_CASES], ids=[c[0] for c in PROPORTION_CASES])
def test_proportional_scaling(d: dict[str, Any], sets: list[tuple[int, int]], want: list[int]) -> None:
    active = [_rs(n, m) for n, m in sets]
    assert rollout_math.proportions(d, active, [m for _, m in sets]) == want


# -- revision annotations ---------------------------------------------------------------------

def test_a_new_replica_set_takes_the_next_revision_and_the_deployment_annotations() -> None:
    d = {"metadata": {"annotations": {"team": "web", revisions.LAST_APPLIED: "{}", revisions.REVISION: "4"}}}
    rs: dict[str, Any] = {"metadata": {}}
    assert revisions.set_new_rs_annotations(d, rs, 5, False, 3, 4)
    assert rs["metadata"]["annotations"] == {"team": "web", revisions.REVISION: "5", revisions.DESIRED_REPLICAS: "3",
                                             revisions.MAX_REPLICAS: "4"}


def test_a_rolled_back_replica_set_keeps_its_old_revision_in_the_history() -> None:
    rs = {"metadata": {"annotations": {revisions.REVISION: "2", revisions.REVISION_HISTORY: "1"}}}
    assert revisions.set_new_rs_annotations({"metadata": {}}, rs, 4, True, 3, 4)
    assert (rs["metadata"]["annotations"][revisions.REVISION], rs["metadata"]["annotations"][revisions.REVISION_HISTORY]) == ("4", "1,2")


def test_an_up_to_date_replica_set_changes_nothing() -> None:
    rs = {"metadata": {"annotations": {revisions.REVISION: "3"}}}
    assert not revisions.set_new_rs_annotations({"metadata": {}}, rs, 3, True, 3, 4)


# -- conditions -------------------------------------------------------------------------------

T0, NOW = "2026-01-01T00:00:00Z", 1_767_225_700.0  # NOW is T0 + 100 s


def _progressing(reason: str, status: str = "True", updated: str = T0) -> dict[str, Any]:
    return {"type": "Progressing", "status": status, "reason": reason, "message": "m", "lastUpdateTime": updated,
            "lastTransitionTime": T0}


def _state(replicas: int, updated: int, available: int, conds: list[dict[str, Any]], ready: int | None = None) -> dict[str, Any]:
    return {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": updated,
            "readyReplicas": available if ready is None else ready, "availableReplicas": available, "conditions": conds}


CONDITION_CASES = [
    ("all new replicas available completes the rollout", 3, 300, _state(3, 2, 2, [_progressing("ReplicaSetUpdated")]),
     _state(3, 3, 3, [_progressing("ReplicaSetUpdated")]), ("True", "NewReplicaSetAvailable", 'ReplicaSet "web-1" has successfully progressed.')),
    ("more updated replicas is progress", 3, 300, _state(3, 1, 1, [_progressing("NewReplicaSetCreated")]),
     _state(4, 2, 2, [_progressing("NewReplicaSetCreated")]), ("True", "ReplicaSetUpdated", 'ReplicaSet "web-1" is progressing.')),
    ("no progress past the deadline times out", 3, 60, _state(3, 1, 1, [_progressing("ReplicaSetUpdated")]),
     _state(3, 1, 1, [_progressing("ReplicaSetUpdated")]), ("False", "ProgressDeadlineExceeded", 'ReplicaSet "web-1" has timed out progressing.')),
    ("no progress within the deadline leaves the condition", 3, 300, _state(3, 1, 1, [_progressing("ReplicaSetUpdated")]),
     _state(3, 1, 1, [_progressing("ReplicaSetUpdated")]), ("True", "ReplicaSetUpdated", "m")),
    ("a completed rollout stays complete", 3, 60, _state(3, 3, 3, [_progressing("NewReplicaSetAvailable")]),
     _state(3, 3, 2, [_progressing("NewReplicaSetAvailable")]), ("True", "NewReplicaSetAvailable", "m")),
]


@pytest.mark.parametrize("replicas, deadline, old, new, want", [c[1:] for c in CONDITION_CASES], ids=[c[0] for c in CONDITION_CASES])
def test_progressing_condition(replicas: int, deadline: int, old: dict[str, Any], new: dict[str, Any],
                               want: tuple[str, str, str]) -> None:
    d = {"metadata": {"generation": 1}, "spec": {"replicas": replicas, "progressDeadlineSeconds": deadline}, "status": old}
    conditions.rollout_progress(d, new, {"metadata": {"name": "web-1"}}, NOW)
    got = conditions.get_condition(new, "Progressing")
    assert got is not None and (got["status"], got["reason"], got["message"]) == want


AVAILABLE_CASES = [
    ("enough available replicas within maxUnavailable is MinimumReplicasAvailable", 4, 3,
     ("True", "MinimumReplicasAvailable", "Deployment has minimum availability.")),
    ("fewer is MinimumReplicasUnavailable", 4, 2,
     ("False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")),
]


@pytest.mark.parametrize("replicas, available, want", [c[1:] for c in AVAILABLE_CASES], ids=[c[0] for c in AVAILABLE_CASES])
def test_available_condition(replicas: int, available: int, want: tuple[str, str, str]) -> None:
    d = _deploy(replicas)
    rs = {"spec": {"replicas": replicas}, "status": {"replicas": replicas, "availableReplicas": available}}
    status = conditions.calculate_status(d, [rs], rs, T0)
    got = conditions.get_condition(status, "Available")
    assert got is not None and (got["status"], got["reason"], got["message"]) == want
    assert status["unavailableReplicas"] == replicas - available


def test_the_same_status_keeps_the_transition_time() -> None:
    status = {"conditions": [_progressing("NewReplicaSetCreated")]}
    conditions.set_condition(status, conditions.condition("Progressing", "True", "ReplicaSetUpdated", "x", "later"))
    [got] = status["conditions"]
    assert (got["reason"], got["lastTransitionTime"], got["lastUpdateTime"]) == ("ReplicaSetUpdated", T0, "later")


# -- against a real API server ------------------------------------------------------------------

CONTROLLERS = ("replicaset", "deployment")
NS = "default"


async def _kubelet(cluster: Cluster, stop: asyncio.Event) -> None:
    """A stand-in for nodes and scheduler: binds every pod to node-1 and marks it Running and Ready,
    and finishes deletions at once (no kubelet would confirm them). Pods labelled `stuck` never start."""
    while not stop.is_set():
        for pod in (await cluster.client.list(PODS, NS)).get("items") or []:
            meta = pod["metadata"]
            if (meta.get("labels") or {}).get("stuck") and not meta.get("deletionTimestamp"):
                continue
            try:
                if meta.get("deletionTimestamp"):
                    await cluster.client.delete(PODS, meta["name"], NS, grace_period_seconds=0)
                    continue
                if not pod_states.is_ready(pod):
                    if not pod["spec"].get("nodeName"):
                        await cluster.client.request("POST", PODS.path(NS, meta["name"], "binding"), body={
                            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"]},
                            "target": {"kind": "Node", "name": "node-1"}})
                    stamp = pod_states.format_time(time.time())
                    await cluster.client.patch(PODS, meta["name"], {"status": {"phase": "Running", "conditions": [
                        {"type": "Ready", "status": "True", "lastTransitionTime": stamp}]}}, NS, subresource="status")
            except errors.APIError:
                pass  # gone or changed meanwhile: the next round sees it
        await asyncio.sleep(0.1)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def kubelet(cluster: Cluster) -> AsyncIterator[None]:
    stop = asyncio.Event()
    task = asyncio.create_task(_kubelet(cluster, stop))
    yield
    stop.set()
    await task


def _deployment(name: str, replicas: int, image: str = "nginx", strategy: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                            "template": {"metadata": {"labels": {"app": name}},
                                         "spec": {"containers": [{"name": "main", "image": image}]}}}
    if strategy:
        spec["strategy"] = strategy
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


async def _replica_sets(cluster: Cluster, uid: str) -> list[dict[str, Any]]:
    items = (await cluster.client.list(REPLICASETS, NS)).get("items") or []
    return sorted((rs for rs in items if any(r.get("uid") == uid for r in rs["metadata"].get("ownerReferences") or [])),
                  key=lambda rs: int(rs["metadata"]["annotations"].get(revisions.REVISION, "0")))


def _rolled_out(cluster: Cluster, name: str, image: str) -> Any:
    async def check() -> dict[str, Any] | None:
        d = await cluster.client.get(DEPLOYMENTS, name, NS)
        status = d.get("status") or {}
        progressing = conditions.get_condition(status, "Progressing") or {}
        wanted = d["spec"]["replicas"]
        done = d["spec"]["template"]["spec"]["containers"][0]["image"] == image and \
            status.get("observedGeneration") == d["metadata"]["generation"] and \
            status.get("updatedReplicas", 0) == wanted == status.get("availableReplicas", 0) == status.get("replicas", 0) \
            and progressing.get("reason") == "NewReplicaSetAvailable"
        return d if done else None
    return check


async def _events_of(cluster: Cluster, uid: str, reason: str) -> list[str]:
    items = (await cluster.client.list(EVENTS, NS)).get("items") or []
    return [e["message"] for e in sorted(items, key=lambda e: int(e["metadata"]["resourceVersion"]))
            if e["involvedObject"].get("uid") == uid and e["reason"] == reason]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_deployment_rolls_out_its_first_replica_set(cluster: Cluster, kubelet: None) -> None:
    made = await cluster.client.create(DEPLOYMENTS, _deployment("web", 3), NS)
    uid = made["metadata"]["uid"]

    d = await eventually(_rolled_out(cluster, "web", "nginx"), timeout=15)

    [rs] = await _replica_sets(cluster, uid)
    pod_hash = template_hash.compute(made["spec"]["template"])
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    assert rs["metadata"]["labels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": pod_hash}}
    assert {k: v for k, v in rs["metadata"]["annotations"].items()} == {
        revisions.REVISION: "1", revisions.DESIRED_REPLICAS: "3", revisions.MAX_REPLICAS: "4"}
    assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert d["metadata"]["annotations"][revisions.REVISION] == "1"
    assert d["metadata"]["generation"] == 1  # the revision annotation went with the status write
    status = d["status"]
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
        ("Progressing", "True", "NewReplicaSetAvailable", f'ReplicaSet "web-{pod_hash}" has successfully progressed.')]
    assert await _events_of(cluster, uid, "ScalingReplicaSet") == [f"Scaled up replica set web-{pod_hash} from 0 to 3"]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_new_template_rolls_within_surge_and_unavailability(cluster: Cluster, kubelet: None) -> None:
    made = await cluster.client.create(DEPLOYMENTS, _deployment("api", 4), NS)
    uid = made["metadata"]["uid"]
    await eventually(_rolled_out(cluster, "api", "nginx"), timeout=15)

    await cluster.client.patch(DEPLOYMENTS, "api", {"spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": "nginx:1.27"}]}}}}, NS, patch_type="strategic")
    d = await eventually(_rolled_out(cluster, "api", "nginx:1.27"), timeout=20)

    old, new = await _replica_sets(cluster, uid)
    assert (old["spec"]["replicas"], new["spec"]["replicas"]) == (0, 4)
    assert new["metadata"]["annotations"][revisions.REVISION] == "2" == d["metadata"]["annotations"][revisions.REVISION]
    scaled = await _events_of(cluster, uid, "ScalingReplicaSet")
    # maxSurge 1, maxUnavailable 1 of 4: the new one starts at 1 (5 pods at most), the old one goes to 3.
    assert scaled[1:3] == [f"Scaled up replica set {new['metadata']['name']} from 0 to 1",
                           f"Scaled down replica set {old['metadata']['name']} from 4 to 3"]
    # Replaying the events, the two never hold more than replicas + maxSurge = 5 pods between them.
    sizes = {old["metadata"]["name"]: 0, new["metadata"]["name"]: 0}
    for message in scaled:
        words = message.split()
        sizes[words[4]] = int(words[-1])
        assert sum(sizes.values()) <= 5, scaled
    assert sizes == {old["metadata"]["name"]: 0, new["metadata"]["name"]: 4}


@pytest.mark.asyncio(loop_scope="module")
async def test_recreate_scales_the_old_replica_set_to_zero_before_the_new_one(cluster: Cluster, kubelet: None) -> None:
    made = await cluster.client.create(DEPLOYMENTS, _deployment("batch", 2, strategy={"type": "Recreate"}), NS)
    uid = made["metadata"]["uid"]
    await eventually(_rolled_out(cluster, "batch", "nginx"), timeout=15)

    await cluster.client.patch(DEPLOYMENTS, "batch", {"spec": {"template": {"spec": {"containers": [
        {"name": "main", "image": "busybox"}]}}}}, NS, patch_type="strategic")
    await eventually(_rolled_out(cluster, "batch", "busybox"), timeout=20)

    old, new = await _replica_sets(cluster, uid)
    assert await _events_of(cluster, uid, "ScalingReplicaSet") == [
        f"Scaled up replica set {old['metadata']['name']} from 0 to 2",
        f"Scaled down replica set {old['metadata']['name']} from 2 to 0",
        f"Scaled up replica set {new['metadata']['name']} from 0 to 2"]


@pytest.mark.asyncio(loop_scope="module")
async def test_revisions_past_the_history_limit_are_deleted(cluster: Cluster, kubelet: None) -> None:
    body = _deployment("hist", 1)
    body["spec"]["revisionHistoryLimit"] = 1
    made = await cluster.client.create(DEPLOYMENTS, body, NS)
    uid = made["metadata"]["uid"]
    for image in ("nginx", "nginx:1.26", "nginx:1.27"):
        if image != "nginx":
            await cluster.client.patch(DEPLOYMENTS, "hist", {"spec": {"template": {"spec": {"containers": [
                {"name": "main", "image": image}]}}}}, NS, patch_type="strategic")
        await eventually(_rolled_out(cluster, "hist", image), timeout=15)

    async def trimmed() -> list[dict[str, Any]] | None:
        sets = await _replica_sets(cluster, uid)
        return sets if len(sets) == 2 else None

    sets = await eventually(trimmed, timeout=10)
    assert [rs["metadata"]["annotations"][revisions.REVISION] for rs in sets] == ["2", "3"]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_rollout_without_progress_exceeds_its_deadline_and_rollout_status_says_so(cluster: Cluster, kubelet: None) -> None:
    body = _deployment("stuck", 2)
    body["spec"]["progressDeadlineSeconds"] = 1
    body["spec"]["template"]["metadata"]["labels"]["stuck"] = "yes"
    await cluster.client.create(DEPLOYMENTS, body, NS)

    async def timed_out() -> dict[str, Any] | None:
        status = (await cluster.client.get(DEPLOYMENTS, "stuck", NS)).get("status") or {}
        found = conditions.get_condition(status, "Progressing")
        return found if found and found["reason"] == "ProgressDeadlineExceeded" else None

    found = await eventually(timed_out, timeout=15)
    assert found["status"] == "False" and found["message"].startswith('ReplicaSet "stuck-') \
        and found["message"].endswith('" has timed out progressing.')
    code, _, err = await cluster.kubectl("rollout", "status", "deployment/stuck", "--timeout=10s")
    assert code == 1 and 'deployment "stuck" exceeded its progress deadline' in err


@pytest.mark.asyncio(loop_scope="module")
async def test_an_orphan_replica_set_with_the_template_is_adopted_as_the_new_one(cluster: Cluster, kubelet: None) -> None:
    body = _deployment("adopt", 2)
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "adopt-by-hand", "labels": {"app": "adopt"}},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "adopt"}}, "template": body["spec"]["template"]}}
    await cluster.client.create(REPLICASETS, rs, NS)
    made = await cluster.client.create(DEPLOYMENTS, body, NS)

    await eventually(_rolled_out(cluster, "adopt", "nginx"), timeout=15)

    [owned] = await _replica_sets(cluster, made["metadata"]["uid"])
    assert owned["metadata"]["name"] == "adopt-by-hand"
    assert owned["metadata"]["ownerReferences"][0]["name"] == "adopt"
    assert owned["metadata"]["annotations"][revisions.REVISION] == "1"


@pytest.mark.asyncio(loop_scope="module")
async def test_min_ready_seconds_reaches_the_replica_set_and_availability_follows(cluster: Cluster, kubelet: None) -> None:
    body = _deployment("settle", 2)
    body["spec"]["minReadySeconds"] = 1
    made = await cluster.client.create(DEPLOYMENTS, body, NS)

    await eventually(_rolled_out(cluster, "settle", "nginx"), timeout=15)

    [rs] = await _replica_sets(cluster, made["metadata"]["uid"])
    assert rs["spec"]["minReadySeconds"] == 1 and rs["status"]["availableReplicas"] == 2


@pytest.mark.asyncio(loop_scope="module")
async def test_scaling_in_mid_rollout_shares_the_new_size_by_proportion(cluster: Cluster, kubelet: None) -> None:
    made = await cluster.client.create(DEPLOYMENTS, _deployment("grow", 4), NS)
    uid = made["metadata"]["uid"]
    await eventually(_rolled_out(cluster, "grow", "nginx"), timeout=15)
    # The new template's pods never become ready: the rollout holds at old 3 + new 2 (surge 1, unavailable 1).
    await cluster.client.patch(DEPLOYMENTS, "grow", {"spec": {"template": {"metadata": {"labels": {"stuck": "yes"}}}}},
                               NS, patch_type="strategic")

    def sizes(want: tuple[int, int]) -> Any:
        async def check() -> list[dict[str, Any]] | None:
            sets = await _replica_sets(cluster, uid)
            got = tuple(rs["spec"]["replicas"] for rs in sets)
            return sets if got == want else None
        return check

    await eventually(sizes((3, 2)), timeout=15)

    await cluster.client.patch(DEPLOYMENTS, "grow", {"spec": {"replicas": 8}}, NS)

    # Surge becomes 2: 10 pods allowed, the 5 more shared 3 : 2 (each ReplicaSet scaled by 10/5).
    old, new = await eventually(sizes((6, 4)), timeout=15)
    for rs in (old, new):
        assert rs["metadata"]["annotations"][revisions.DESIRED_REPLICAS] == "8"
        assert rs["metadata"]["annotations"][revisions.MAX_REPLICAS] == "10"
    wanted = {f"Scaled up replica set {old['metadata']['name']} from 3 to 6",
              f"Scaled up replica set {new['metadata']['name']} from 2 to 4"}

    async def recorded() -> bool:  # the event follows the write it reports
        return wanted <= set(await _events_of(cluster, uid, "ScalingReplicaSet"))

    await eventually(recorded)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_name_taken_by_another_replica_set_bumps_the_collision_count(cluster: Cluster, kubelet: None) -> None:
    body = _deployment("clash", 1)
    body["spec"]["paused"] = True  # a paused Deployment makes no ReplicaSet: time to take its name
    made = await cluster.client.create(DEPLOYMENTS, body, NS)
    taken = f"clash-{template_hash.compute(made['spec']['template'])}"
    await cluster.client.create(REPLICASETS, {"metadata": {"name": taken}, "spec": {
        "replicas": 0, "selector": {"matchLabels": {"app": "squatter"}},
        "template": {"metadata": {"labels": {"app": "squatter"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}, NS)

    await cluster.client.patch(DEPLOYMENTS, "clash", {"spec": {"paused": False}}, NS)

    d = await eventually(_rolled_out(cluster, "clash", "nginx"), timeout=15)
    assert d["status"]["collisionCount"] == 1
    [rs] = await _replica_sets(cluster, made["metadata"]["uid"])
    assert rs["metadata"]["name"] == f"clash-{template_hash.compute(made['spec']['template'], 1)}" != taken
