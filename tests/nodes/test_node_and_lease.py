"""nodes/kubelet/node_object.py (capacity, allocatable, labels) and lease.py against a real server."""

from __future__ import annotations

from datetime import datetime, timezone

from client.kubeconfig import Config
from client.resources import LEASES, NODES
from client.rest import RestClient
from nodes import pools
from nodes.kubelet import lease, node_object


def _shape() -> pools.NodeShape:
    return pools.expand([pools.Pool("cpu", 1, cpu="16", memory="64Gi", ephemeral_storage="100Gi",
                                    taints=({"key": "k", "value": "v", "effect": "NoSchedule"},))])[0]


def test_allocatable_is_capacity_minus_the_default_hard_eviction_thresholds() -> None:
    shape = _shape()
    assert node_object.capacity(shape) == {"cpu": "16", "ephemeral-storage": "104857600Ki", "hugepages-1Gi": "0",
                                           "hugepages-2Mi": "0", "memory": "67108864Ki", "pods": "110"}
    allocatable = node_object.allocatable(shape)
    assert allocatable["memory"] == f"{67108864 - 102400}Ki"  # memory.available < 100Mi
    assert allocatable["ephemeral-storage"] == str(100 * 2**30 - (100 * 2**30) // 10)  # nodefs.available < 10%
    assert allocatable["cpu"] == "16" and allocatable["pods"] == "110"


def test_the_registration_has_the_kubelets_labels_spec_and_conditions() -> None:
    node = node_object.registration(_shape(), address="127.0.0.1", port=4242, boot_id="b",
                                    now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
    labels = node["metadata"]["labels"]
    assert {k: labels[k] for k in ("kubernetes.io/arch", "kubernetes.io/os", "kubernetes.io/hostname",
                                   "topology.kubernetes.io/rack")} == {
        "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": "cpu-0",
        "topology.kubernetes.io/rack": "rack-1"}
    assert node["spec"]["taints"] == [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    ready = node["status"]["conditions"][-1]
    assert ready == {"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-01-02T03:04:05Z",
                     "lastTransitionTime": "2026-01-02T03:04:05Z", "reason": "KubeletReady",
                     "message": "kubelet is posting ready status"}
    assert node["status"]["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 4242}}
    assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.36.3"


def test_conditions_keep_their_transition_time_and_move_the_heartbeat() -> None:
    later = datetime(2026, 1, 2, 3, 9, 5, tzinfo=timezone.utc)
    rows = node_object.conditions(later, {"Ready": "2026-01-02T03:04:05Z"})
    ready = rows[-1]
    assert (ready["lastTransitionTime"], ready["lastHeartbeatTime"]) == ("2026-01-02T03:04:05Z", "2026-01-02T03:09:05Z")


async def test_the_lease_is_created_owned_by_the_node_and_renewed(api) -> None:
    async with RestClient(Config.for_url(api.url)) as client:
        node = await client.create(NODES, {"metadata": {"name": "n1"}})
        keeper = lease.LeaseKeeper(client, "n1", node["metadata"]["uid"])
        first = await keeper.renew_once()
        assert first["spec"]["holderIdentity"] == "n1" and first["spec"]["leaseDurationSeconds"] == 40
        assert first["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": "n1",
                                                         "uid": node["metadata"]["uid"]}]
        assert keeper.interval == 10
        # Someone else writes the Lease in between: the next renewal re-reads it instead of failing.
        await client.patch(LEASES, "n1", {"metadata": {"labels": {"x": "y"}}}, "kube-node-lease")
        second = await keeper.renew_once()
        assert second["metadata"]["labels"] == {"x": "y"}
        assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
        assert second["spec"]["renewTime"] >= first["spec"]["renewTime"] and keeper.renewals == 2
