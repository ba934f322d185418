"""The DaemonSet controller: which nodes a DaemonSet wants and what one pass does, as tables; then
against a real API server in-process: one pod per eligible node pinned by node affinity with the
daemon tolerations, a tainted node left out until the template tolerates it, status counting
ready pods, and a rolling update that replaces pods within maxUnavailable.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from client.resources import CONTROLLERREVISIONS, DAEMONSETS, EVENTS, NODES, PODS
from controllers import daemon_placement, daemon_set, pod_states
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("daemonset",)
NS = "default"
NOW = 1_800_000_000.0


def _node(name: str, labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"taints": taints} if taints else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec}


def _template(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "agent"}], **spec}}


NOSCHED = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
NOEXEC = {"key": "dedicated", "value": "gpu", "effect": "NoExecute"}
SHOULD_RUN_CASES = [
    ("an untainted node runs the pod", _template(), _node("n"), (True, True)),
    ("a nodeSelector that does not match keeps the pod off", _template(nodeSelector={"disk": "ssd"}), _node("n"), (False, False)),
    ("a nodeSelector that matches lets it on", _template(nodeSelector={"disk": "ssd"}), _node("n", {"disk": "ssd"}), (True, True)),
    ("required node affinity is honoured", _template(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}),
     _node("n", {"zone": "b"}), (False, False)),
    ("a NoSchedule taint keeps a new pod off but lets an old one stay", _template(), _node("n", taints=[NOSCHED]), (False, True)),
    ("a NoExecute taint evicts", _template(), _node("n", taints=[NOEXEC]), (False, False)),
    ("a toleration of the taint lets the pod on", _template(tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu"}]),
     _node("n", taints=[NOSCHED, NOEXEC]), (True, True)),
    ("the daemon tolerations cover an unschedulable node", _template(),
     _node("n", taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]), (True, True)),
    ("the daemon tolerations cover a not-ready node", _template(),
     _node("n", taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]), (True, True)),
    ("network-unavailable is tolerated only by host-network pods", _template(),
     _node("n", taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]), (False, True)),
    ("a host-network pod tolerates network-unavailable", _template(hostNetwork=True),
     _node("n", taints=[{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]), (True, True)),
]


@pytest.mark.parametrize("template, node, want", [c[1:] for c in SHOULD_RUN_CASES], ids=[c[0] for c in SHOULD_RUN_CASES])
def test_should_run(template: dict[str, Any], node: dict[str, Any], want: tuple[bool, bool]) -> None:
    assert daemon_placement.should_run(template, node) == want


def test_the_pod_is_pinned_by_matchfields_and_keeps_the_other_terms() -> None:
    ds = {"metadata": {"name": "d", "uid": "u", "annotations": {daemon_placement.GENERATION_ANNOTATION: "3"}},
          "spec": {"template": _template(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
              "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}})}}
    pod = daemon_placement.new_pod(ds, "node-2", "abc")
    [term] = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchFields"] == [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]
    assert term["matchExpressions"][0]["key"] == "zone" and "nodeName" not in pod["spec"]
    assert daemon_placement.target_node(pod) == "node-2"
    assert pod["metadata"]["labels"] == {"app": "d", "controller-revision-hash": "abc", "pod-template-generation": "3"}
    keys = [t["key"] for t in pod["spec"]["tolerations"]]
    assert keys == ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure",
                    "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable"]


def _ds_pod(name: str, node: str, hash_: str = "new", ready: bool = True, phase: str = "Running") -> dict[str, Any]:
    return {"metadata": {"name": name, "uid": name, "creationTimestamp": "2026-01-01T00:00:00Z",
                         "labels": {daemon_placement.REVISION_LABEL: hash_}},
            "spec": {"nodeName": node},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                                       "lastTransitionTime": pod_states.format_time(NOW - 100)}]}}


def _ds(**rolling: Any) -> dict[str, Any]:
    return {"metadata": {"name": "d"}, "spec": {"template": _template(),
                                               "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}}


NODES3 = [_node("a"), _node("b"), _node("c")]
PLAN_CASES = [
    ("every node without a pod gets one", _ds(maxUnavailable=1), [], ["a", "b", "c"], []),
    ("a failed pod is deleted", _ds(maxUnavailable=1), [_ds_pod("pa", "a", phase="Failed"), _ds_pod("pb", "b"), _ds_pod("pc", "c")],
     [], ["pa"]),
    ("a second pod on a node is surplus", _ds(maxUnavailable=1),
     [_ds_pod("pa", "a"), _ds_pod("pa2", "a"), _ds_pod("pb", "b"), _ds_pod("pc", "c")], [], ["pa2"]),
    ("a pod for a node that is gone is deleted", _ds(maxUnavailable=1),
     [_ds_pod("pa", "a"), _ds_pod("pb", "b"), _ds_pod("pc", "c"), _ds_pod("px", "x")], [], ["px"]),
    ("maxUnavailable 1 replaces one available old pod at a time", _ds(maxUnavailable=1, maxSurge=0),
     [_ds_pod("pa", "a", "old"), _ds_pod("pb", "b", "old"), _ds_pod("pc", "c", "old")], [], ["pa"]),
    ("an unavailable old pod is replaced at once, beyond the budget", _ds(maxUnavailable=1, maxSurge=0),
     [_ds_pod("pa", "a", "old"), _ds_pod("pb", "b", "old", ready=False), _ds_pod("pc", "c", "old")], [], ["pb"]),
    ("a new pod not yet available uses up the budget", _ds(maxUnavailable=1, maxSurge=0),
     [_ds_pod("pa", "a", ready=False), _ds_pod("pb", "b", "old"), _ds_pod("pc", "c", "old")], [], []),
    ("maxSurge creates a new pod beside an old one", _ds(maxUnavailable=0, maxSurge=1),
     [_ds_pod("pa", "a", "old"), _ds_pod("pb", "b", "old"), _ds_pod("pc", "c", "old")], ["a"], []),
    ("under surge the old pod goes once its new neighbour is available, and the next node surges",
     _ds(maxUnavailable=0, maxSurge=1),
     [_ds_pod("pa", "a", "old"), _ds_pod("pa2", "a"), _ds_pod("pb", "b", "old"), _ds_pod("pc", "c", "old")], ["b"], ["pa"]),
    ("under surge a new pod not yet available holds the next node back", _ds(maxUnavailable=0, maxSurge=1),
     [_ds_pod("pa", "a", "old"), _ds_pod("pa2", "a", ready=False), _ds_pod("pb", "b", "old"), _ds_pod("pc", "c", "old")], [], []),
    ("OnDelete leaves old pods alone", {"metadata": {"name": "d"}, "spec": {"template": _template(),
                                                                          "updateStrategy": {"type": "OnDelete"}}},
     [_ds_pod("pa", "a", "old"), _ds_pod("pb", "b", "old"), _ds_pod("pc", "c", "old")], [], []),
]


@pytest.mark.parametrize("ds, pods, create, delete", [c[1:] for c in PLAN_CASES], ids=[c[0] for c in PLAN_CASES])
def test_plan(ds: dict[str, Any], pods: list[dict[str, Any]], create: list[str], delete: list[str]) -> None:
    got = daemon_set.plan(ds, NODES3, daemon_set.pods_by_node(pods), "new", NOW)
    assert (got.create_on, [p["metadata"]["name"] for p in got.delete]) == (create, delete)


def test_status_counts_wanted_nodes_pods_and_misscheduled_ones() -> None:
    ds = _ds(maxUnavailable=1)
    ds["spec"]["template"]["spec"]["nodeSelector"] = {"role": "agent"}
    nodes = [_node("a", {"role": "agent"}), _node("b", {"role": "agent"}), _node("c")]
    pods = [_ds_pod("pa", "a"), _ds_pod("pb", "b", "old", ready=False), _ds_pod("pc", "c")]
    status = daemon_set.calculate_status(ds, nodes, daemon_set.pods_by_node(pods), "new", 0, NOW)
    assert status == {"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberMisscheduled": 1, "numberReady": 1,
                      "numberAvailable": 1, "updatedNumberScheduled": 1, "numberUnavailable": 1, "observedGeneration": 0}


def test_status_leaves_out_zero_omitempty_counts() -> None:
    status = daemon_set.calculate_status(_ds(maxUnavailable=1), [_node("a")], {}, "new", 0, NOW)
    assert status == {"desiredNumberScheduled": 1, "currentNumberScheduled": 0, "numberMisscheduled": 0, "numberReady": 0,
                      "numberUnavailable": 1, "observedGeneration": 0}


# -- against the API server ----------------------------------------------------------------------


async def _pods(cluster: Cluster, app: str) -> list[dict[str, Any]]:
    items = (await cluster.client.list(PODS, NS, label_selector=f"app={app}")).get("items") or []
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


async def _bind_and_ready(cluster: Cluster, pod: dict[str, Any]) -> None:
    """Stand in for the scheduler and the kubelet: bind the pod where its affinity says, mark it ready."""
    name = pod["metadata"]["name"]
    if not pod["spec"].get("nodeName"):
        await cluster.client.request("POST", PODS.path(NS, name, "binding"), body={
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"kind": "Node", "name": daemon_placement.target_node(pod)}})
    await cluster.client.patch(PODS, name, {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": pod_states.format_time(time.time())}]}}, NS, subresource="status")


def _daemonset(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "agent"}]}},
                     **spec}}


@pytest.mark.asyncio(loop_scope="module")
async def test_one_pod_per_eligible_node_then_a_rolling_update(cluster: Cluster) -> None:
    for node in (_node("w1"), _node("w2"), _node("w3"), _node("gpu", taints=[NOSCHED])):
        await cluster.client.create(NODES, node)
    ds = await cluster.client.create(DAEMONSETS, _daemonset("agent"), NS)

    async def three() -> list[dict[str, Any]] | None:
        pods = await _pods(cluster, "agent")
        return pods if len(pods) == 3 else None
    pods = await eventually(three)
    assert sorted(daemon_placement.target_node(p) or "" for p in pods) == ["w1", "w2", "w3"]
    assert all(p["metadata"]["ownerReferences"][0]["uid"] == ds["metadata"]["uid"] for p in pods)
    assert all(p["metadata"]["name"].startswith("agent-") and "nodeName" not in p["spec"] for p in pods)
    [revision] = (await cluster.client.list(CONTROLLERREVISIONS, NS, label_selector="app=agent"))["items"]
    first_hash = pods[0]["metadata"]["labels"]["controller-revision-hash"]
    assert revision["metadata"]["name"] == f"agent-{first_hash}"
    for pod in pods:
        await _bind_and_ready(cluster, pod)

    async def counted() -> dict[str, Any] | None:
        status = (await cluster.client.get(DAEMONSETS, "agent", NS)).get("status") or {}
        return status if status.get("numberAvailable") == 3 else None
    status = await eventually(counted)
    assert (status["desiredNumberScheduled"], status["currentNumberScheduled"], status["numberReady"],
            status["updatedNumberScheduled"], status["numberMisscheduled"]) == (3, 3, 3, 3, 0)
    items = (await cluster.client.list(EVENTS, NS)).get("items") or []
    assert {e["message"] for e in items if e["involvedObject"]["name"] == "agent" and e["reason"] == "SuccessfulCreate"} == \
        {f"Created pod: {p['metadata']['name']}" for p in pods}

    # Tolerating the taint brings the fourth node in.
    await cluster.client.patch(DAEMONSETS, "agent", {"spec": {"template": {"spec": {"tolerations": [
        {"key": "dedicated", "operator": "Exists"}]}}}}, NS, patch_type="strategic")

    async def rolled() -> list[dict[str, Any]] | None:
        current = await _pods(cluster, "agent")
        new = [p for p in current if p["metadata"]["labels"]["controller-revision-hash"] != first_hash]
        not_ready = [p for p in current if not pod_states.is_ready(p)]
        for pod in not_ready:
            await _bind_and_ready(cluster, pod)
        # The kubelet's part: pods being deleted go at once.
        for pod in (await cluster.client.list(PODS, NS, label_selector="app=agent"))["items"]:
            if pod["metadata"].get("deletionTimestamp"):
                await cluster.client.delete(PODS, pod["metadata"]["name"], NS, grace_period_seconds=0)
        return current if len(new) == 4 == len(current) and all(pod_states.is_ready(p) for p in current) else None
    final = await eventually(rolled, timeout=15)
    assert sorted(daemon_placement.target_node(p) or "" for p in final) == ["gpu", "w1", "w2", "w3"]
    revisions = (await cluster.client.list(CONTROLLERREVISIONS, NS, label_selector="app=agent"))["items"]
    assert sorted(r["revision"] for r in revisions) == [1, 2]
