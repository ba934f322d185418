"""nodes/kubelet/admission.py: the kubelet's predicate admit handler, first failure wins."""

from __future__ import annotations

import pytest

from nodes.kubelet import admission, resources

NODE = {
    "metadata": {"name": "cpu-0", "labels": {"kubernetes.io/hostname": "cpu-0", "topology.kubernetes.io/rack": "rack-1"}},
    "spec": {"taints": [{"key": "dedicated", "value": "ml", "effect": "NoExecute"},
                        {"key": "soft", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "3", "ephemeral-storage": "10Gi"}},
}
TOLERATE = [{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoExecute"}]


def pod(cpu: str | None = None, memory: str | None = None, **spec) -> dict:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    container = {"name": "c", "image": "busybox", "resources": {"requests": requests} if requests else {}}
    return {"metadata": {"name": "p", "labels": spec.pop("labels", {})},
            "spec": {"nodeName": "cpu-0", "containers": [container], "tolerations": TOLERATE, **spec}}


CASES = [
    ("a pod that fits is admitted", pod("500m"), [], None),
    ("more cpu than is left is OutOfcpu with the kubelet's numbers", pod("1500m"), [pod("1")],
     ("OutOfcpu", "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000")),
    ("more memory than allocatable is OutOfmemory in bytes", pod(memory="5Gi"), [],
     ("OutOfmemory", "Node didn't have enough resource: memory, requested: 5368709120, used: 0, capacity: 4294967296")),
    ("a full node is OutOfpods", pod(), [pod(), pod(), pod()],
     ("OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3")),
    ("a node selector that does not match is NodeAffinity", pod(nodeSelector={"topology.kubernetes.io/rack": "rack-2"}), [],
     ("NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector")),
    ("a matching required node affinity is admitted",
     pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchExpressions": [{"key": "topology.kubernetes.io/rack", "operator": "In", "values": ["rack-9"]}]},
         {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["cpu-0"]}]}]}}}), [], None),
    ("a required node affinity no term matches is NodeAffinity",
     pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]}}}), [],
     ("NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector")),
    ("an untolerated NoExecute taint is TaintToleration", pod(tolerations=[]), [],
     ("TaintToleration", "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate")),
    ("an untolerated NoSchedule taint is the scheduler's business, not the kubelet's", pod(tolerations=TOLERATE), [], None),
    ("an Exists toleration with no key tolerates everything", pod(tolerations=[{"operator": "Exists"}]), [], None),
    ("a host port another pod holds is NodePorts",
     pod(containers=[{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}]),
     [pod(containers=[{"name": "d", "ports": [{"containerPort": 81, "hostPort": 8080}]}])],
     ("NodePorts", "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports")),
    ("resources are checked before affinity", pod("3", nodeSelector={"x": "y"}), [],
     ("OutOfcpu", "Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000")),
    ("a windows pod is refused by its os label first", pod("3", labels={"kubernetes.io/os": "windows"}), [],
     ("PodOSSelectorNodeLabelDoesNotMatch", "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label")),
    ("an extended resource the node does not have is left to DRA or the cluster",
     pod(containers=[{"name": "c", "resources": {"requests": {"example.com/foo": "1"}}}]), [], None),
]


@pytest.mark.parametrize("name, candidate, running, expected", CASES, ids=[c[0] for c in CASES])
def test_admission(name, candidate, running, expected) -> None:
    result = admission.admit(candidate, NODE, running)
    assert (None if result is None else (result.reason, result.message)) == expected


def test_pod_requests_count_init_containers_and_sidecars_as_upstream() -> None:
    spec = {
        "initContainers": [
            {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "200m"}}},
            {"name": "big-init", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
        ],
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "300m"}}},
                       {"name": "b", "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}],
        "overhead": {"cpu": "10m"},
    }
    # regular 400m + sidecar 200m = 600m; init peak 1000m + 200m sidecar = 1200m; + 10m overhead
    assert resources.pod_requests({"spec": spec}) == {"cpu": 1210, "memory": 1 << 30}


@pytest.mark.parametrize("quantity, millis", [("500m", 500), ("2", 2000), ("1.5", 1500), ("1e3", 1_000_000), ("0.0001", 1)])
def test_cpu_quantities_round_up_to_millicores(quantity: str, millis: int) -> None:
    assert resources.milli(quantity) == millis
