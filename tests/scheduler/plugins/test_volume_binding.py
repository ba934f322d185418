"""VolumeBinding: PreFilter's claim checks, Filter on bound PVs' node affinity and on finding a PV
(or a provisioner) for WaitForFirstConsumer claims, Reserve's assumed bindings, and PreBind's
writes through a fake client that applies them to the stores as an informer would."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from client import resources
from client.resources import Resource
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import QueueingHint
from scheduler.framework.status import Code
from scheduler.plugins import volume_binding as vb
from tests.scheduler.fakes import FakeHandle, node, pod

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
NODES = [node("a", labels={ZONE: "z1"}), node("b", labels={ZONE: "z1"}), node("c", labels={ZONE: "z2"})]
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def storage_class(name: str, mode: str = "WaitForFirstConsumer", provisioner: str = vb.NO_PROVISIONER,
                  **extra: Any) -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode, **extra}


def pvc(name: str, size: str = "8Gi", cls: str = "local", volume: str = "", modes: tuple[str, ...] = ("ReadWriteOnce",),
        selector: Obj | None = None, **meta: Any) -> Obj:
    spec: Obj = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, "storageClassName": cls}
    if selector is not None:
        spec["selector"] = selector
    obj: Obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": "1", **meta},
                "spec": spec, "status": {"phase": "Pending"}}
    if volume:
        spec["volumeName"] = volume
        obj["metadata"].setdefault("annotations", {})[vb.ANN_BIND_COMPLETED] = "yes"
        obj["status"] = {"phase": "Bound"}
    return obj


def pv(name: str, size: str = "10Gi", cls: str = "local", on: str | None = None, zone: str | None = None,
       modes: tuple[str, ...] = ("ReadWriteOnce",), claim: str = "", labels: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": cls}
    key, value = ("kubernetes.io/hostname", on) if on else (ZONE, zone)
    if value:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}}
    if claim:
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": claim}
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "resourceVersion": "1", "labels": labels or {}},
            "spec": spec, "status": {"phase": "Bound" if claim else "Available"}}


def claiming(*claims: str, ephemeral: tuple[str, ...] = ()) -> Obj:
    volumes = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    volumes += [{"name": e, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}} for e in ephemeral]
    return pod("app", spec={"volumes": volumes})


def handle_with(pvcs: list[Obj], pvs: list[Obj] = (), classes: list[Obj] | None = None) -> FakeHandle:  # type: ignore[assignment]
    return FakeHandle(NODES, stores={
        resources.PERSISTENTVOLUMECLAIMS: pvcs, resources.PERSISTENTVOLUMES: list(pvs),
        resources.STORAGECLASSES: classes if classes is not None else
        [storage_class("local"), storage_class("fast", "Immediate", "csi.example.com"),
         storage_class("dynamic", provisioner="csi.example.com", allowedTopologies=[
             {"matchLabelExpressions": [{"key": ZONE, "values": ["z1"]}]}])]})


def run_filter(handle: FakeHandle, p: Obj, state: CycleState | None = None) -> dict[str, Any]:
    plugin = handle.plugin if hasattr(handle, "plugin") else vb.new({}, handle, {})
    state = state or CycleState()
    _, status = plugin.pre_filter(state, p, handle.snapshot.node_infos)
    assert status is None, status
    out = {}
    for info in handle.snapshot.node_infos:
        st = plugin.filter(state, p, info)
        out[info.name] = None if st is None else (st.code, st.message)
    return out


PRE_FILTER_CASES = [
    pytest.param([], claiming("data"), (UNRESOLVABLE, 'persistentvolumeclaim "data" not found'),
                 id="A missing claim is unresolvable with the API's not-found text"),
    pytest.param([pvc("data", cls="fast")], claiming("data"), (UNRESOLVABLE, vb.ERR_UNBOUND_IMMEDIATE),
                 id="An unbound claim of an Immediate class makes the pod unschedulable"),
    pytest.param([pvc("data", cls="")], claiming("data"), (UNRESOLVABLE, vb.ERR_UNBOUND_IMMEDIATE),
                 id="An unbound claim without a class binds immediately too"),
    pytest.param([pvc("data", cls="missing")], claiming("data"), (UNRESOLVABLE, vb.ERR_UNBOUND_IMMEDIATE),
                 id="A claim whose class does not exist is treated as Immediate"),
    pytest.param([pvc("data", deletionTimestamp="2026-01-01T00:00:00Z")], claiming("data"),
                 (UNRESOLVABLE, 'persistentvolumeclaim "data" is being deleted'), id="A terminating claim is refused"),
    pytest.param([pvc("app-scratch")], claiming(ephemeral=("scratch",)),
                 (UNRESOLVABLE, "PVC default/app-scratch was not created for pod default/app (pod is not owner)"),
                 id="An ephemeral volume's claim must be owned by the pod"),
    pytest.param([], pod("app"), (Code.SKIP, ""), id="A pod without claims is skipped"),
]


@pytest.mark.parametrize("pvcs,p,want", PRE_FILTER_CASES)
def test_pre_filter(pvcs: list[Obj], p: Obj, want: tuple[Code, str]) -> None:
    handle = handle_with(pvcs)
    _, status = vb.new({}, handle, {}).pre_filter(CycleState(), p, handle.snapshot.node_infos)
    assert status is not None and (status.code, status.message) == want


FILTER_CASES = [
    pytest.param([pvc("data", volume="pv-z1")], [pv("pv-z1", zone="z1")], claiming("data"),
                 {"a": None, "b": None, "c": (UNRESOLVABLE, vb.ERR_NODE_CONFLICT)},
                 id="A bound PV's node affinity confines the pod to matching nodes"),
    pytest.param([pvc("data", volume="gone")], [], claiming("data"),
                 {n: (UNRESOLVABLE, vb.ERR_PV_NOT_EXIST) for n in "abc"},
                 id="A claim bound to a PV that does not exist fails everywhere"),
    pytest.param([pvc("data", volume="pv-any")], [pv("pv-any")], claiming("data"), {"a": None, "b": None, "c": None},
                 id="A bound PV without node affinity fits every node"),
    pytest.param([pvc("data")], [pv("small", "5Gi", on="a"), pv("big", "20Gi", on="a"), pv("pv-b", on="b")],
                 claiming("data"), {"a": None, "b": None, "c": (UNRESOLVABLE, vb.ERR_BIND_CONFLICT)},
                 id="WaitForFirstConsumer finds a local PV on each node that has one"),
    pytest.param([pvc("data")], [pv("rox", on="a", modes=("ReadOnlyMany",)), pv("other", on="b", cls="slow"),
                                 pv("claimed", on="c", claim="someone-else")],
                 claiming("data"), {n: (UNRESOLVABLE, vb.ERR_BIND_CONFLICT) for n in "abc"},
                 id="Access modes, class and an existing claimRef rule PVs out"),
    pytest.param([pvc("data")], [pv("mine", on="c", claim="data")], claiming("data"),
                 {"a": (UNRESOLVABLE, vb.ERR_BIND_CONFLICT), "b": (UNRESOLVABLE, vb.ERR_BIND_CONFLICT), "c": None},
                 id="A PV pre-bound to the claim is used"),
    pytest.param([pvc("data", selector={"matchLabels": {"tier": "gold"}})],
                 [pv("plain", on="a"), pv("gold", on="b", labels={"tier": "gold"})], claiming("data"),
                 {"a": (UNRESOLVABLE, vb.ERR_BIND_CONFLICT), "b": None, "c": (UNRESOLVABLE, vb.ERR_BIND_CONFLICT)},
                 id="A claim's selector must match the PV's labels"),
    pytest.param([pvc("data", cls="dynamic")], [], claiming("data"),
                 {"a": None, "b": None, "c": (UNRESOLVABLE, vb.ERR_BIND_CONFLICT)},
                 id="A provisioning class's allowedTopologies limit where a new volume can come from"),
    pytest.param([pvc("one"), pvc("two")], [pv("only", on="a")], claiming("one", "two"),
                 {n: (UNRESOLVABLE, vb.ERR_BIND_CONFLICT) for n in "abc"},
                 id="Two claims cannot share one PV"),
    pytest.param([pvc("old", volume="pv-z2"), pvc("new")], [pv("pv-z2", zone="z2", claim="old"), pv("local-a", on="a")],
                 claiming("old", "new"),
                 {"a": (UNRESOLVABLE, vb.ERR_NODE_CONFLICT), "b": (UNRESOLVABLE, f"{vb.ERR_NODE_CONFLICT}, {vb.ERR_BIND_CONFLICT}"),
                  "c": (UNRESOLVABLE, vb.ERR_BIND_CONFLICT)},
                 id="Bound and unbound claims report both reasons in upstream's order"),
]


@pytest.mark.parametrize("pvcs,pvs,p,want", FILTER_CASES)
def test_filter(pvcs: list[Obj], pvs: list[Obj], p: Obj, want: dict[str, Any]) -> None:
    assert run_filter(handle_with(pvcs, pvs), p) == want


@pytest.mark.parametrize("pvs,want", [
    pytest.param([pv("local", on="b")], {"b"}, id="A bound local PV narrows the candidates to its host"),
    pytest.param([pv("zonal", zone="z1")], None, id="A PV pinned by zone leaves the candidates alone"),
])
def test_pre_filter_result_from_bound_local_volumes(pvs: list[Obj], want: set[str] | None) -> None:
    handle = handle_with([pvc("data", volume=_meta_name(pvs[0]))], pvs)
    result, status = vb.new({}, handle, {}).pre_filter(CycleState(), claiming("data"), handle.snapshot.node_infos)
    assert status is None
    assert (result.node_names if result else None) == want


def _meta_name(obj: Obj) -> str:
    return obj["metadata"]["name"]


def test_filter_picks_the_smallest_pv_that_fits() -> None:
    handle = handle_with([pvc("data")], [pv("big", "20Gi", on="a"), pv("small", "5Gi", on="a"), pv("fit", "9Gi", on="a")])
    plugin = vb.new({}, handle, {})
    state = CycleState()
    p = claiming("data")
    plugin.pre_filter(state, p, handle.snapshot.node_infos)
    assert plugin.filter(state, p, handle.snapshot.get("a")) is None
    assert plugin.reserve(state, p, "a") is None
    assert plugin.pre_bind_pre_flight(state, p, "a") is None
    claim_ref = plugin.pvs.get("fit")["spec"]["claimRef"]
    assert (claim_ref["name"], claim_ref["uid"]) == ("data", "uid-data")


def test_reserve_hides_the_pv_from_the_next_pod_until_unreserve() -> None:
    handle = handle_with([pvc("data"), pvc("other")], [pv("only", on="a")])
    plugin = vb.new({}, handle, {})
    first, state = claiming("data"), CycleState()
    plugin.pre_filter(state, first, handle.snapshot.node_infos)
    assert plugin.filter(state, first, handle.snapshot.get("a")) is None
    plugin.reserve(state, first, "a")
    second = claiming("other")
    second["metadata"]["name"] = "second"
    handle.plugin = plugin  # type: ignore[attr-defined]
    assert run_filter(handle, second)["a"] == (UNRESOLVABLE, vb.ERR_BIND_CONFLICT)
    plugin.unreserve(state, first, "a")
    assert run_filter(handle, second)["a"] is None


def test_everything_bound_skips_pre_bind() -> None:
    handle = handle_with([pvc("data", volume="pv-any")], [pv("pv-any")])
    plugin, state, p = _reserved(handle, {}, "a")
    status = plugin.pre_bind_pre_flight(state, p, "a")
    assert status is not None and status.code is Code.SKIP


def _reserved(handle: FakeHandle, args: Obj, node: str) -> tuple[vb.VolumeBinding, CycleState, Obj]:
    """A pod claiming "data", through PreFilter, Filter on `node` and Reserve there."""
    plugin = vb.new(args, handle, {})
    state, p = CycleState(), claiming("data")
    plugin.pre_filter(state, p, handle.snapshot.node_infos)
    plugin.filter(state, p, handle.snapshot.get(node))
    plugin.reserve(state, p, node)
    return plugin, state, p


class FakeClient:
    """Applies PUTs to the handle's stores with a new resourceVersion, as the server and the
    informer together would; `provision` binds a claim once it gets a selected node, and `bind`
    binds a claim once a PV is pre-bound to it (the PV controller's half)."""

    def __init__(self, handle: FakeHandle, provision: bool = False, bind: bool = False) -> None:
        self.handle, self.provision, self.bind = handle, provision, bind
        self.calls: list[tuple[str, str, str | None, Obj]] = []
        self.rv = 100

    async def update(self, resource: Resource, obj: Obj, namespace: str | None = None,
                     subresource: str | None = None) -> Obj:
        self.calls.append((resource.resource, obj["metadata"]["name"], subresource, copy.deepcopy(obj)))
        self.rv += 1
        written = copy.deepcopy(obj)
        written["metadata"]["resourceVersion"] = str(self.rv)
        self.handle.store(resource).add(written)
        annotations = written["metadata"].get("annotations") or {}
        if self.provision and resource is resources.PERSISTENTVOLUMECLAIMS and vb.ANN_SELECTED_NODE in annotations:
            asyncio.get_running_loop().call_soon(self._provision, written)
        if self.bind and resource is resources.PERSISTENTVOLUMES and (written.get("spec") or {}).get("claimRef"):
            asyncio.get_running_loop().call_soon(self._bind, written)
        return written

    def _bind(self, volume: Obj) -> None:
        ref = volume["spec"]["claimRef"]
        claims = self.handle.store(resources.PERSISTENTVOLUMECLAIMS)
        bound = copy.deepcopy(claims.get(f"{ref['namespace']}/{ref['name']}"))
        bound["spec"]["volumeName"] = volume["metadata"]["name"]
        bound["metadata"].setdefault("annotations", {})[vb.ANN_BIND_COMPLETED] = "yes"
        bound["status"] = {"phase": "Bound"}
        claims.add(bound)

    def _provision(self, claim: Obj) -> None:
        bound = copy.deepcopy(claim)
        bound["spec"]["volumeName"] = "pvc-new"
        bound["metadata"]["annotations"][vb.ANN_BIND_COMPLETED] = "yes"
        bound["status"] = {"phase": "Bound"}
        self.handle.store(resources.PERSISTENTVOLUMECLAIMS).add(bound)


async def test_pre_bind_writes_only_the_pv_claim_ref_and_waits_for_the_pv_controller() -> None:
    handle = handle_with([pvc("data")], [pv("local-a", on="a")])
    handle.client = client = FakeClient(handle, bind=True)
    plugin, state, p = _reserved(handle, {}, "a")
    assert await plugin.pre_bind(state, p, "a") is None
    # Upstream's binder: the PV's claimRef, nothing of the claim and no status (the PV controller's).
    assert [(c[0], c[1], c[2]) for c in client.calls] == [("persistentvolumes", "local-a", None)]
    written_pv = client.calls[0][3]
    assert written_pv["spec"]["claimRef"] == {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": "default",
                                              "name": "data", "uid": "uid-data", "resourceVersion": "1"}
    assert written_pv["metadata"]["annotations"] == {vb.ANN_BOUND_BY_CONTROLLER: "yes"}
    assert written_pv["metadata"]["resourceVersion"] == "1"  # the update is conditional on what was read
    # The informer's newer PV replaces the assumed one.
    assert plugin.pvs.get("local-a")["metadata"]["resourceVersion"] == "101"


async def test_pre_bind_of_a_pre_bound_pv_times_out_without_a_pv_controller() -> None:
    handle = handle_with([pvc("data")], [pv("local-a", on="a")])
    handle.client = FakeClient(handle)
    plugin, state, p = _reserved(handle, {"bindTimeoutSeconds": 0}, "a")
    status = await plugin.pre_bind(state, p, "a")
    assert status is not None and status.code is Code.ERROR
    assert "claims default/data not bound" in status.message


async def test_pre_bind_selects_the_node_and_waits_for_the_provisioner() -> None:
    handle = handle_with([pvc("data", cls="dynamic")])
    handle.client = client = FakeClient(handle, provision=True)
    plugin, state, p = _reserved(handle, {}, "b")
    assert await plugin.pre_bind(state, p, "b") is None
    assert [(c[0], c[1]) for c in client.calls] == [("persistentvolumeclaims", "data")]
    assert client.calls[0][3]["metadata"]["annotations"] == {vb.ANN_SELECTED_NODE: "b"}


async def test_pre_bind_gives_up_after_bind_timeout_seconds() -> None:
    handle = handle_with([pvc("data", cls="dynamic")])
    handle.client = FakeClient(handle, provision=False)
    plugin, state, p = _reserved(handle, {"bindTimeoutSeconds": 0}, "a")
    status = await plugin.pre_bind(state, p, "a")
    assert status is not None and status.code is Code.ERROR
    assert status.message.startswith("binding volumes: timed out waiting for the condition")


def test_args() -> None:
    assert vb.DEFAULT_ARGS == {"bindTimeoutSeconds": 600}
    with pytest.raises(ValueError, match="should not be a negative value"):
        vb.new({"bindTimeoutSeconds": -1}, FakeHandle(), {})


@pytest.mark.parametrize("old,new,want", [
    pytest.param(None, pvc("data"), QueueingHint.QUEUE, id="The pod's own claim appearing queues"),
    pytest.param(None, pvc("unrelated"), QueueingHint.SKIP, id="Another claim skips"),
])
def test_claim_hint(old: Obj | None, new: Obj | None, want: QueueingHint) -> None:
    plugin = vb.new({}, FakeHandle(), {})
    hint = next(e.hint for e in plugin.events_to_register() if e.event.resource.value == "PersistentVolumeClaim")
    assert hint(claiming("data"), old, new) is want


@pytest.mark.parametrize("old,new,want", [
    pytest.param(None, storage_class("x"), QueueingHint.QUEUE, id="A new class queues"),
    pytest.param(storage_class("x"), storage_class("x", allowedTopologies=[]), QueueingHint.QUEUE,
                 id="Changed allowedTopologies queue"),
    pytest.param(storage_class("x"), storage_class("x"), QueueingHint.SKIP, id="An unchanged class skips"),
])
def test_storage_class_hint(old: Obj | None, new: Obj | None, want: QueueingHint) -> None:
    plugin = vb.new({}, FakeHandle(), {})
    hint = next(e.hint for e in plugin.events_to_register() if e.event.resource.value == "storage.k8s.io/StorageClass")
    assert hint(claiming("data"), old, new) is want


def test_an_ephemeral_volumes_claim_owned_by_the_pod_is_used() -> None:
    claim = pvc("app-scratch", ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": "app",
                                                  "uid": "uid-default-app", "controller": True}])
    handle = handle_with([claim], [pv("local-b", on="b")])
    assert run_filter(handle, claiming(ephemeral=("scratch",))) == {
        "a": (UNRESOLVABLE, vb.ERR_BIND_CONFLICT), "b": None, "c": (UNRESOLVABLE, vb.ERR_BIND_CONFLICT)}
