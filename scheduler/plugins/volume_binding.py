"""VolumeBinding, the basic cases: a pod's PersistentVolumeClaims decide where it may run.

PreFilter sorts the claims into bound, WaitForFirstConsumer (to bind) and unbound Immediate (the
pod is unschedulable). Filter checks bound PVs' node affinity and finds, per node, the smallest
fitting available PV or a class that can provision there. Reserve assumes the choice in an overlay;
PreBind writes the binder's half, as upstream's: a PV's claimRef, or a claim's `selected-node`, and
waits until the PV controller (`controllers/volume_binder.py`) or a provisioner has bound the claims. No Score (upstream
scores only under the alpha StorageCapacityScoring gate). Built by `scheduler/registry.py`.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from client import resources
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import Features, Handle, PreFilterResult
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.resources import parse_quantity
from scheduler.framework.status import Status
from scheduler.plugins import label_selectors, names, node_selectors

Obj = dict[str, Any]

NAME = names.VOLUME_BINDING
ERR_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
# VolumeBindingArgs as pkg/scheduler/apis/config/v1 defaults them (shape only with StorageCapacityScoring).
DEFAULT_ARGS: Obj = {"bindTimeoutSeconds": 600}

_STATE_KEY = "PreFilter" + NAME
_POLL_SECONDS = 0.1


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _key(obj: Obj) -> str:
    meta = _meta(obj)
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta.get("name", "")


def claim_class(pvc: Obj) -> str:
    annotations = _meta(pvc).get("annotations") or {}
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    return (pvc.get("spec") or {}).get("storageClassName") or ""


def is_fully_bound(pvc: Obj) -> bool:
    if not (pvc.get("spec") or {}).get("volumeName"):
        return False
    return ANN_BIND_COMPLETED in (_meta(pvc).get("annotations") or {}) or (pvc.get("status") or {}).get("phase") == "Bound"


def _storage(quantities: Obj | None) -> Any:
    value = (quantities or {}).get("storage")
    return parse_quantity(value) if value is not None else 0


@dataclass
class PodVolumes:
    """What binding the pod's claims on one node takes (upstream's PodVolumes)."""

    static_bindings: list[tuple[Obj, Obj]] = field(default_factory=list)  # (pvc, pv)
    dynamic_provisions: list[Obj] = field(default_factory=list)  # pvcs


@dataclass
class State:
    bound_claims: list[Obj]
    claims_to_bind: list[Obj]
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    all_bound: bool = False
    assumed: list[str] = field(default_factory=list)  # overlay keys this pod assumed in Reserve


class _Overlay:
    """Assumed versions of objects over an informer store (upstream's assume cache): an entry
    stands until the informer brings a version newer than the one it was based on."""

    def __init__(self, handle: Handle, resource: Any) -> None:
        self.handle, self.resource = handle, resource
        handle.store(resource)
        self.assumed: dict[str, tuple[str, Obj]] = {}  # key -> (resourceVersion it was based on, object)

    def get(self, key: str) -> Obj | None:
        current = self.handle.store(self.resource).get(key)
        entry = self.assumed.get(key)
        if entry is not None:
            if current is not None and _meta(current).get("resourceVersion") != entry[0]:
                del self.assumed[key]
                return current
            return entry[1]
        return current

    def list(self) -> list[Obj]:
        return [self.get(_key(obj)) or obj for obj in self.handle.store(self.resource).list()]

    def assume(self, obj: Obj) -> str:
        key = _key(obj)
        base = self.handle.store(self.resource).get(key)
        self.assumed[key] = (_meta(base).get("resourceVersion", ""), obj)
        return key

    def restore(self, key: str) -> None:
        self.assumed.pop(key, None)


class VolumeBinding:
    name = NAME

    def __init__(self, args: Obj, handle: Handle, features: Features) -> None:
        merged = {**DEFAULT_ARGS, **(args or {})}
        timeout = int(merged["bindTimeoutSeconds"])
        if timeout < 0:
            raise ValueError(f"bindTimeoutSeconds: Invalid value: {timeout}: invalid BindTimeoutSeconds, "
                             f"should not be a negative value")
        self.bind_timeout = timeout
        self.handle = handle
        self.pvs = _Overlay(handle, resources.PERSISTENTVOLUMES)
        self.pvcs = _Overlay(handle, resources.PERSISTENTVOLUMECLAIMS)
        handle.store(resources.STORAGECLASSES)  # started and synced with the scheduler's informers

    # --- the pod's claims

    def _claim_names(self, pod: Obj) -> list[tuple[str, bool]]:
        """(claim name, from an ephemeral volume) for each volume backed by a claim."""
        out = []
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            if volume.get("persistentVolumeClaim"):
                out.append((volume["persistentVolumeClaim"].get("claimName", ""), False))
            elif volume.get("ephemeral"):
                out.append((f"{_meta(pod).get('name', '')}-{volume.get('name', '')}", True))
        return out

    def _delay_binding(self, pvc: Obj) -> bool:
        name = claim_class(pvc)
        if not name:
            return False
        sc = self.handle.store(resources.STORAGECLASSES).get(name)
        return bool(sc) and sc.get("volumeBindingMode") == "WaitForFirstConsumer"

    def pre_filter(self, state: CycleState, pod: Obj,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        claims = self._claim_names(pod)
        if not claims:
            return None, Status.skip()
        meta = _meta(pod)
        namespace = meta.get("namespace", "")
        bound, to_bind, immediate = [], [], []
        for name, ephemeral in claims:
            pvc = self.pvcs.get(f"{namespace}/{name}")
            if pvc is None:
                return None, Status.unresolvable(f'persistentvolumeclaim "{name}" not found')
            if _meta(pvc).get("deletionTimestamp"):
                return None, Status.unresolvable(f'persistentvolumeclaim "{name}" is being deleted')
            if ephemeral and not any(ref.get("controller") and ref.get("uid") == meta.get("uid")
                                     for ref in _meta(pvc).get("ownerReferences") or []):
                return None, Status.unresolvable(
                    f"PVC {namespace}/{name} was not created for pod {namespace}/{meta.get('name', '')} (pod is not owner)")
            if is_fully_bound(pvc):
                bound.append(pvc)
            elif self._delay_binding(pvc):
                to_bind.append(pvc)
            else:
                immediate.append(pvc)
        if immediate:
            return None, Status.unresolvable(ERR_UNBOUND_IMMEDIATE)
        # Smallest claims first, so a small claim does not take the PV a larger one needs.
        to_bind.sort(key=lambda c: _storage(((c.get("spec") or {}).get("resources") or {}).get("requests")))
        state.write(_STATE_KEY, State(bound, to_bind))
        return self._eligible_nodes(bound), None

    def _eligible_nodes(self, bound: list[Obj]) -> PreFilterResult | None:
        """Bound local PVs pin the pod to the hosts their node affinity names (GetEligibleNodes)."""
        eligible: set[str] | None = None
        for pvc in bound:
            pv = self.pvs.get((pvc.get("spec") or {}).get("volumeName", ""))
            hosts = _local_volume_hosts(pv) if pv is not None else None
            if hosts is not None:
                eligible = hosts if eligible is None else eligible & hosts
        return None if eligible is None else PreFilterResult(eligible)

    # --- Filter

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        s: State | None = state.get(_STATE_KEY)
        if s is None:
            return Status.as_error(f'error reading "{_STATE_KEY}" from cycleState: not found')
        node_obj = node.node or {}
        reasons: list[str] = []
        pvs_found, bound_ok = True, True
        for pvc in s.bound_claims:
            pv = self.pvs.get((pvc.get("spec") or {}).get("volumeName", ""))
            if pv is None:
                pvs_found = False
                break
            if not _pv_fits_node(pv, node_obj):
                bound_ok = False
                break
        volumes = PodVolumes()
        unbound_ok = True
        if s.claims_to_bind:
            unbound_ok = self._find_volumes(s.claims_to_bind, node_obj, volumes)
        # Upstream's order: node conflict, bind conflict, (not enough space), PV not found.
        if not bound_ok:
            reasons.append(ERR_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_BIND_CONFLICT)
        if not pvs_found:
            reasons.append(ERR_PV_NOT_EXIST)
        if reasons:
            return Status.unresolvable(*reasons)
        s.by_node[node.name] = volumes
        return None

    def _find_volumes(self, claims: list[Obj], node: Obj, out: PodVolumes) -> bool:
        chosen: set[str] = set()
        candidates = [pv for pv in self.pvs.list() if not _meta(pv).get("deletionTimestamp")]
        for pvc in claims:
            pv = _best_volume(pvc, candidates, node, chosen)
            if pv is not None:
                chosen.add(_meta(pv)["name"])
                out.static_bindings.append((pvc, pv))
                continue
            if not self._can_provision(pvc, node):
                return False
            out.dynamic_provisions.append(pvc)
        return True

    def _can_provision(self, pvc: Obj, node: Obj) -> bool:
        sc = self.handle.store(resources.STORAGECLASSES).get(claim_class(pvc))
        if not sc or sc.get("provisioner", NO_PROVISIONER) == NO_PROVISIONER:
            return False
        topologies = sc.get("allowedTopologies") or []
        if not topologies:
            return True
        labels = _meta(node).get("labels") or {}
        return any(all(labels.get(e.get("key")) in (e.get("values") or []) for e in t.get("matchLabelExpressions") or [])
                   for t in topologies)

    # --- Reserve / Unreserve

    def reserve(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        s: State | None = state.get(_STATE_KEY)
        if s is None:
            return None  # PreFilter skipped: the pod has no claims
        volumes = s.by_node.get(node_name)
        if volumes is None:
            return Status.as_error(f"no volumes found for node {node_name!r}")
        s.all_bound = not volumes.static_bindings and not volumes.dynamic_provisions
        for i, (pvc, pv) in enumerate(volumes.static_bindings):
            bound_pv = bind_volume_to_claim(pv, pvc)
            s.assumed.append("pv:" + self.pvs.assume(bound_pv))
            volumes.static_bindings[i] = (pvc, bound_pv)
        for i, pvc in enumerate(volumes.dynamic_provisions):
            selected = copy.deepcopy(pvc)
            selected["metadata"].setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name
            s.assumed.append("pvc:" + self.pvcs.assume(selected))
            volumes.dynamic_provisions[i] = selected
        return None

    def unreserve(self, state: CycleState, pod: Obj, node_name: str) -> None:
        s: State | None = state.get(_STATE_KEY)
        if s is None:
            return
        for entry in s.assumed:
            kind, key = entry.split(":", 1)
            (self.pvs if kind == "pv" else self.pvcs).restore(key)
        s.assumed.clear()

    # --- PreBind

    def pre_bind_pre_flight(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        s: State | None = state.get(_STATE_KEY)
        if s is None or s.all_bound:
            return Status.skip()
        return None

    async def pre_bind(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        s: State | None = state.get(_STATE_KEY)
        if s is None or s.all_bound:
            return None
        volumes = s.by_node.get(node_name) or PodVolumes()
        client = self.handle.client
        try:
            # BindPodVolumes: the scheduler writes only its half, a PV's claimRef (static) or a claim's
            # selected-node (dynamic); the PV controller binds the rest, and PreBind waits for it.
            for _, pv in volumes.static_bindings:
                await client.update(resources.PERSISTENTVOLUMES, pv)
            for pvc in volumes.dynamic_provisions:
                await client.update(resources.PERSISTENTVOLUMECLAIMS, pvc)
            await self._wait_bound([_key(pvc) for pvc, _ in volumes.static_bindings]
                                   + [_key(pvc) for pvc in volumes.dynamic_provisions])
        except Exception as exc:  # an API error or the timeout: the pod goes back with Unreserve
            return Status.as_error(f"binding volumes: {exc}")
        return None

    async def _wait_bound(self, keys: list[str]) -> None:
        """checkBindings: until the PV controller (or a provisioner) has bound every claim
        (bindTimeoutSeconds)."""
        if not keys:
            return
        store = self.handle.store(resources.PERSISTENTVOLUMECLAIMS)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.bind_timeout
        while True:
            pending = [k for k in keys if not is_fully_bound(store.get(k) or {})]
            if not pending:
                return
            if loop.time() >= deadline:
                raise TimeoutError(f"timed out waiting for the condition: claims {', '.join(pending)} not bound")
            await asyncio.sleep(_POLL_SECONDS)

    # --- queueing hints

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(Resource.STORAGE_CLASS, add_update), self._after_storage_class_change),
            ClusterEventWithHint(ClusterEvent(Resource.PERSISTENT_VOLUME_CLAIM, add_update), self._after_claim_change),
            ClusterEventWithHint(ClusterEvent(Resource.PERSISTENT_VOLUME, add_update)),
            ClusterEventWithHint(ClusterEvent(Resource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                                              | ActionType.UPDATE_NODE_TAINT)),
            ClusterEventWithHint(ClusterEvent(Resource.CSI_NODE, add_update)),
        ]

    def _after_claim_change(self, pod: Obj, old: Obj | None, new: Obj | None) -> QueueingHint:
        claim = new if new is not None else old or {}
        if _meta(claim).get("namespace") != _meta(pod).get("namespace"):
            return QueueingHint.SKIP
        wanted = {name for name, _ in self._claim_names(pod)}
        return QueueingHint.QUEUE if _meta(claim).get("name") in wanted else QueueingHint.SKIP

    def _after_storage_class_change(self, pod: Obj, old: Obj | None, new: Obj | None) -> QueueingHint:
        if old is None:
            return QueueingHint.QUEUE
        # Only allowedTopologies can change on an existing class (the rest is immutable).
        changed = (old or {}).get("allowedTopologies") != (new or {}).get("allowedTopologies")
        return QueueingHint.QUEUE if changed else QueueingHint.SKIP


def _local_volume_hosts(pv: Obj) -> set[str] | None:
    """GetLocalPersistentVolumeNodeNames: the union over terms of each term's hostname In values."""
    required = (((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required"))
    if required is None:
        return None
    out: set[str] = set()
    for term in required.get("nodeSelectorTerms") or []:
        hosts: set[str] | None = None
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") == "kubernetes.io/hostname" and expr.get("operator") == "In":
                values = set(expr.get("values") or [])
                hosts = values if hosts is None else hosts & values
        out |= hosts or set()
    return out or None


def _pv_fits_node(pv: Obj, node: Obj) -> bool:
    """volume.CheckNodeAffinity: a PV without required node affinity fits everywhere."""
    required = (((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required"))
    return required is None or node_selectors.NodeSelector.compile(required, lazy=True).matches(node)


def _satisfies(pv: Obj, pvc: Obj) -> bool:
    spec, claim = pv.get("spec") or {}, pvc.get("spec") or {}
    if (spec.get("storageClassName") or "") != claim_class(pvc):
        return False
    if (spec.get("volumeMode") or "Filesystem") != (claim.get("volumeMode") or "Filesystem"):
        return False
    if not set(claim.get("accessModes") or []) <= set(spec.get("accessModes") or []):
        return False
    if _storage(spec.get("capacity")) < _storage((claim.get("resources") or {}).get("requests")):
        return False
    if claim.get("selector") is not None:
        try:
            if not label_selectors.label_selector(claim["selector"]).matches(_meta(pv).get("labels") or {}):
                return False
        except ValueError:
            return False
    return True


def _bound_to(pv: Obj, pvc: Obj) -> bool:
    ref = (pv.get("spec") or {}).get("claimRef") or {}
    meta = _meta(pvc)
    if ref.get("name") != meta.get("name") or ref.get("namespace") != meta.get("namespace"):
        return False
    return not ref.get("uid") or ref.get("uid") == meta.get("uid")


def _best_volume(pvc: Obj, pvs: list[Obj], node: Obj, chosen: set[str]) -> Obj | None:
    """volume.FindMatchingVolume: a PV pre-bound to this claim wins; otherwise the smallest fit."""
    best, best_size = None, None
    for pv in pvs:
        name = _meta(pv).get("name", "")
        if name in chosen:
            continue
        ref = (pv.get("spec") or {}).get("claimRef")
        if ref:
            if _bound_to(pv, pvc) and _satisfies(pv, pvc) and _pv_fits_node(pv, node):
                return pv
            continue
        if (pv.get("status") or {}).get("phase", "Available") not in ("", "Pending", "Available"):
            continue
        if not _satisfies(pv, pvc) or not _pv_fits_node(pv, node):
            continue
        size = _storage((pv.get("spec") or {}).get("capacity"))
        if best_size is None or size < best_size:
            best, best_size = pv, size
    return best


def bind_volume_to_claim(pv: Obj, pvc: Obj) -> Obj:
    """pvutil.GetBindVolumeToClaim: the PV with a claimRef to `pvc`, marked as bound by a controller."""
    out = copy.deepcopy(pv)
    meta = _meta(pvc)
    if not (out.get("spec") or {}).get("claimRef"):
        out["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
    out.setdefault("spec", {})["claimRef"] = {
        "kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": meta.get("namespace", ""),
        "name": meta.get("name", ""), "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", "")}
    return out


def new(args: Obj, handle: Handle, features: Features) -> VolumeBinding:
    return VolumeBinding(args, handle, features)
