"""DynamicResources with claims for a whole PodGroup (KEP-5729) against the in-process API server.

Two pods of a PodGroup that name its claim are placed one after the other in one cycle: the first
allocates in Reserve, the second reads that in-flight allocation instead of allocating again (the
claim's one device is not counted twice), and PreBind writes one allocation and one `reservedFor`
entry for the PodGroup whichever pod binds first; a later pod of the group writes nothing. With DRAWorkloadResourceClaims off, the claim is
reserved per pod, as before.
"""

from __future__ import annotations

from typing import Any

import pytest

from client import resources as kinds
from client.kubeconfig import Config
from client.rest import RestClient
from scheduler.framework.cycle_state import CycleState
from scheduler.plugins.dynamic_resources import DynamicResources
from tests.scheduler import fakes
from tests.scheduler.dynamic_resources.objects import device_class, gpu_slice

Obj = dict[str, Any]
GATES = {"GenericWorkload": True, "DRAWorkloadResourceClaims": True}


@pytest.fixture
async def client(api: Any) -> Any:
    rest = RestClient(Config.for_url(api.url))
    try:
        yield rest
    finally:
        await rest.close()


async def _setup(client: RestClient) -> tuple[Obj, Obj, list[Obj]]:
    group = await client.create(kinds.PODGROUPS, {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": {"name": "team", "namespace": "default"},
        "spec": {"schedulingPolicy": {"basic": {}}, "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}})
    claim = await client.create(kinds.RESOURCECLAIMS, {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "shared", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}})
    pods = []
    for name in ("p0", "p1"):
        pods.append(await client.create(kinds.PODS, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingGroup": {"podGroupName": "team"}, "containers": [{"name": "main", "image": "busybox"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared"}]}}))
    return group, claim, pods


def _plugin(client: RestClient, claim: Obj, group: Obj, gates: dict[str, bool]) -> DynamicResources:
    handle = fakes.FakeHandle([fakes.node("n1")], stores={
        kinds.RESOURCECLAIMS: [claim], kinds.RESOURCESLICES: [gpu_slice("n1", "gpu-0")],
        kinds.DEVICECLASSES: [device_class("gpu")], kinds.PODGROUPS: [group]})
    handle.client = client
    return DynamicResources(handle, gates)


def _place(plugin: DynamicResources, pod: Obj) -> CycleState:
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    assert status is None, status
    assert plugin.filter(state, pod, plugin.handle.snapshot.get("n1")) is None
    assert plugin.reserve(state, pod, "n1") is None
    return state


async def test_the_group_allocates_once_and_reserves_for_the_podgroup(client: RestClient) -> None:
    group, claim, (p0, p1) = await _setup(client)
    plugin = _plugin(client, claim, group, GATES)

    first, second = _place(plugin, p0), _place(plugin, p1)  # one cycle: nothing written yet
    # The second pod binds first: it writes the allocation its sibling chose.
    assert await plugin.pre_bind(second, p1, "n1") is None
    assert await plugin.pre_bind(first, p0, "n1") is None

    stored = await client.get(kinds.RESOURCECLAIMS, "shared", "default")
    assert stored["status"]["reservedFor"] == [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups",
                                                "name": "team", "uid": group["metadata"]["uid"]}]
    assert [r["device"] for r in stored["status"]["allocation"]["devices"]["results"]] == ["gpu-0"]
    assert "resource.kubernetes.io/delete-protection" in stored["metadata"]["finalizers"]

    # A later pod of the group finds the claim allocated and reserved for its group: nothing to write.
    late = await client.create(kinds.PODS, {**p0, "metadata": {"name": "p2", "namespace": "default"}})
    plugin.claims.assume(stored)
    assert await plugin.pre_bind(_place(plugin, late), late, "n1") is None
    again = await client.get(kinds.RESOURCECLAIMS, "shared", "default")
    assert again["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]


async def test_with_the_gate_off_each_pod_reserves_the_claim_itself(client: RestClient) -> None:
    group, claim, (p0, p1) = await _setup(client)
    plugin = _plugin(client, claim, group, {"GenericWorkload": True, "DRAWorkloadResourceClaims": False})

    assert await plugin.pre_bind(_place(plugin, p0), p0, "n1") is None
    plugin.claims.assume(await client.get(kinds.RESOURCECLAIMS, "shared", "default"))
    assert await plugin.pre_bind(_place(plugin, p1), p1, "n1") is None

    stored = await client.get(kinds.RESOURCECLAIMS, "shared", "default")
    assert [(r["resource"], r["name"]) for r in stored["status"]["reservedFor"]] == [("pods", "p0"), ("pods", "p1")]
