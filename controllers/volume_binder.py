"""A basic PersistentVolume controller: binds claims to volumes and provisions hostPath volumes.

The minimal part of upstream's pkg/controller/volume/persistentvolume. A Pending claim of an
Immediate class (or none) is bound to the smallest Available volume that fits; a WaitForFirstConsumer
claim waits for the scheduler: its VolumeBinding either pre-binds a volume (the PV's claimRef), which
this controller then binds, or sets `volume.kubernetes.io/selected-node` for a provisioner. For class
provisioner `haru.dev/hostpath` it makes a hostPath volume `pvc-<uid>` pinned to the selected node
and binds it; a released volume it made is deleted. Events as
"persistentvolume-controller": ProvisioningSucceeded, WaitForFirstConsumer, FailedBinding.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Hashable
from typing import Any

from client import cache, errors
from client.informer import Event
from client.resources import PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, STORAGECLASSES
from client.rest import RestClient
from controllers import events, label_selectors
from controllers.reconciling import Result, Watch

log = logging.getLogger("haru.controllers.volume-binder")
Obj = dict[str, Any]
COMPONENT = "persistentvolume-controller"
PROVISIONER = "haru.dev/hostpath"
HOSTPATH_ROOT = "/var/lib/haru/hostpath-provisioner"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def claim_class(pvc: Obj) -> str:
    annotations = _meta(pvc).get("annotations") or {}
    if ANN_BETA_STORAGE_CLASS in annotations:
        return str(annotations[ANN_BETA_STORAGE_CLASS])
    return (pvc.get("spec") or {}).get("storageClassName") or ""


_UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
          "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "m": 10**-3}


def storage_bytes(quantity: Any) -> float:
    """A resource.Quantity as a number (enough to compare sizes: suffixes binary, decimal, milli, exponent)."""
    text = str(quantity or "0").strip()
    for suffix in sorted(_UNITS, key=len, reverse=True):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * _UNITS[suffix]
    return float(text)


def _requested(pvc: Obj) -> float:
    return storage_bytes((((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage"))


def fits(pv: Obj, pvc: Obj) -> bool:
    """Whether `pv` can serve `pvc`: class, volume mode, access modes, capacity and the claim's selector."""
    spec, claim = pv.get("spec") or {}, pvc.get("spec") or {}
    if (spec.get("storageClassName") or "") != claim_class(pvc):
        return False
    if (spec.get("volumeMode") or "Filesystem") != (claim.get("volumeMode") or "Filesystem"):
        return False
    if not set(claim.get("accessModes") or []) <= set(spec.get("accessModes") or []):
        return False
    if storage_bytes((spec.get("capacity") or {}).get("storage")) < _requested(pvc):
        return False
    selector = claim.get("selector")
    return selector is None or label_selectors.matches(selector, _meta(pv).get("labels"))


def _bound_to(pv: Obj, pvc: Obj) -> bool:
    ref = (pv.get("spec") or {}).get("claimRef") or {}
    meta = _meta(pvc)
    return ref.get("name") == meta.get("name") and ref.get("namespace") == meta.get("namespace") and \
        (not ref.get("uid") or ref.get("uid") == meta.get("uid"))


def _prebound_to(pv: Obj, pvc: Obj) -> bool:
    return bool((pv.get("spec") or {}).get("claimRef")) and not _meta(pv).get("deletionTimestamp") \
        and _bound_to(pv, pvc) and fits(pv, pvc)


def best_volume(pvc: Obj, pvs: list[Obj]) -> Obj | None:
    """FindMatchingVolume: a volume pre-bound to the claim first, else the smallest Available fit."""
    best: Obj | None = None
    for pv in pvs:
        if _prebound_to(pv, pvc):
            return pv
        if _meta(pv).get("deletionTimestamp") or (pv.get("spec") or {}).get("claimRef"):
            continue
        if (pv.get("status") or {}).get("phase") not in (None, "", "Pending", "Available"):
            continue
        if (pv.get("spec") or {}).get("nodeAffinity") and ANN_SELECTED_NODE not in (_meta(pvc).get("annotations") or {}):
            continue  # a node-bound volume is the scheduler's to choose
        if fits(pv, pvc) and (best is None or storage_bytes(pv["spec"]["capacity"]["storage"])
                              < storage_bytes(best["spec"]["capacity"]["storage"])):
            best = pv
    return best


def provisioned_volume(pvc: Obj, sc: Obj) -> Obj:
    """The hostPath volume the provisioner makes for `pvc`: `pvc-<uid>`, the claim's size and modes,
    the class's reclaim policy, pinned to the selected node when there is one."""
    meta, spec = _meta(pvc), pvc.get("spec") or {}
    name = f"pvc-{meta['uid']}"
    pv: Obj = {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: sc.get("provisioner") or PROVISIONER}},
        "spec": {
            "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage") or "1Gi"},
            "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
            "storageClassName": claim_class(pvc),
            "volumeMode": spec.get("volumeMode") or "Filesystem",
            "hostPath": {"path": f"{HOSTPATH_ROOT}/{name}", "type": "DirectoryOrCreate"},
            "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": meta["namespace"],
                         "name": meta["name"], "uid": meta["uid"]},
        },
    }
    if sc.get("mountOptions"):
        pv["spec"]["mountOptions"] = list(sc["mountOptions"])
    node = (meta.get("annotations") or {}).get(ANN_SELECTED_NODE)
    if node:
        pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    return pv


class VolumeBinder:
    name = "persistentvolume-binder"

    def __init__(self, client: RestClient, *, provisioner: str = PROVISIONER) -> None:
        self.client = client
        self.provisioner = provisioner
        self.claims = Watch(PERSISTENTVOLUMECLAIMS, self._claim_keys)
        self.volumes = Watch(PERSISTENTVOLUMES, self._volume_keys)
        self.classes = Watch(STORAGECLASSES, self._class_keys)
        self.watches = [self.claims, self.volumes, self.classes]
        self._ctx: Any = None
        self._announced: set[tuple[str, str]] = set()  # (claim uid, reason): one event per waiting claim

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    def _claim_keys(self, event: Event) -> list[Hashable]:
        return [event.key] if event.type != "DELETED" else [f"volume:{_meta(pv)['name']}" for pv in self._volumes_of(event.obj)]

    def _volumes_of(self, pvc: Obj) -> list[Obj]:
        store = self._store(self.volumes)
        return [pv for pv in (store.list() if store is not None else []) if _bound_to(pv, pvc)]

    def _pending_claims(self) -> list[Hashable]:
        store = self._store(self.claims)
        return [cache.key_of(c) for c in (store.list() if store is not None else [])
                if (c.get("status") or {}).get("phase") in (None, "", "Pending")]

    def _volume_keys(self, event: Event) -> list[Hashable]:
        if event.type == "DELETED":
            return []
        return [f"volume:{_meta(event.obj)['name']}", *self._pending_claims()]

    def _class_keys(self, event: Event) -> list[Hashable]:
        return self._pending_claims() if event.type != "DELETED" else []

    def _event(self, obj: Obj, kind: str, type_: str, reason: str, message: str) -> Any:
        return events.record(self.client, COMPONENT, {**obj, "kind": kind, "apiVersion": "v1"}, type_, reason, message)

    async def _once(self, pvc: Obj, type_: str, reason: str, message: str) -> None:
        mark = (_meta(pvc).get("uid") or "", reason)
        if mark not in self._announced:
            self._announced.add(mark)
            await self._event(pvc, "PersistentVolumeClaim", type_, reason, message)

    async def reconcile(self, key: Hashable) -> Result | None:
        text = str(key)
        if text.startswith("volume:"):
            return await self._sync_volume(text.removeprefix("volume:"))
        store = self._store(self.claims)
        pvc = store.get(text) if store is not None else None
        if pvc is None or (pvc.get("status") or {}).get("phase") not in (None, "", "Pending") \
                or _meta(pvc).get("deletionTimestamp"):
            return None
        volume_name = (pvc.get("spec") or {}).get("volumeName")
        volumes = self._store(self.volumes)
        if volume_name:
            pv = volumes.get(volume_name) if volumes is not None else None
            if pv is not None and fits(pv, pvc) and (not (pv.get("spec") or {}).get("claimRef") or _bound_to(pv, pvc)):
                await self._bind(pv, pvc)
            return None
        class_name = claim_class(pvc)
        classes = self._store(self.classes)
        sc = classes.get(class_name) if classes is not None and class_name else None
        selected = (_meta(pvc).get("annotations") or {}).get(ANN_SELECTED_NODE)
        candidates = volumes.list() if volumes is not None else []
        if sc is not None and sc.get("volumeBindingMode") == "WaitForFirstConsumer" and not selected:
            # Only a volume already pre-bound to the claim (by the scheduler's PreBind, or by its
            # author) is bound now; choosing among the others is the scheduler's.
            prebound = next((pv for pv in candidates if _prebound_to(pv, pvc)), None)
            if prebound is not None:
                await self._bind(prebound, pvc)
                return None
            await self._once(pvc, "Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
            return None
        pv = best_volume(pvc, candidates)
        if pv is not None:
            await self._bind(pv, pvc)
            return None
        if sc is None:
            message = ("no persistent volumes available for this claim and no storage class is set" if not class_name
                       else f'storageclass.storage.k8s.io "{class_name}" not found')
            await self._once(pvc, "Warning" if class_name else "Normal", "FailedBinding", message)
            return None
        if sc.get("provisioner") != self.provisioner:
            await self._once(pvc, "Normal", "ExternalProvisioning",
                             f"Waiting for a volume to be created either by the external provisioner '{sc.get('provisioner')}' "
                             "or manually by the system administrator. If volume creation is delayed, please verify that "
                             "the provisioner is running and correctly registered.")
            return None
        await self._provision(pvc, sc)
        return None

    async def _provision(self, pvc: Obj, sc: Obj) -> None:
        meta = _meta(pvc)
        annotations = meta.get("annotations") or {}
        if annotations.get(ANN_STORAGE_PROVISIONER) != self.provisioner:
            def annotate(claim: Obj) -> None:
                claim["metadata"].setdefault("annotations", {}).update(
                    {ANN_STORAGE_PROVISIONER: self.provisioner, ANN_BETA_STORAGE_PROVISIONER: self.provisioner})
            pvc = await self._update_claim(pvc, annotate)
        wanted = provisioned_volume(pvc, sc)
        try:
            pv = await self.client.create(PERSISTENTVOLUMES, wanted)
        except errors.APIError as exc:
            if exc.code != 409:
                await self._event(pvc, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
                                  f"Failed to provision volume with StorageClass \"{claim_class(pvc)}\": {exc.message or exc}")
                raise
            pv = await self.client.get(PERSISTENTVOLUMES, _meta(wanted)["name"])
        else:
            await self._event(pvc, "PersistentVolumeClaim", "Normal", "ProvisioningSucceeded",
                              f"Successfully provisioned volume {_meta(pv)['name']} using {self.provisioner}")
        await self._bind(pv, pvc)

    async def _bind(self, pv: Obj, pvc: Obj) -> None:
        """Upstream's bind: the volume's claimRef and phase, then the claim's volumeName, annotations and phase."""
        meta = _meta(pvc)
        if not _bound_to(pv, pvc) or not ((pv.get("spec") or {}).get("claimRef") or {}).get("uid"):
            body = copy.deepcopy(pv)
            if not (body.get("spec") or {}).get("claimRef"):
                body["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
            body["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": meta["namespace"],
                                        "name": meta["name"], "uid": meta["uid"], "resourceVersion": meta.get("resourceVersion", "")}
            pv = await self.client.update(PERSISTENTVOLUMES, body)
        if (pv.get("status") or {}).get("phase") != "Bound":
            pv = await self.client.update(PERSISTENTVOLUMES, {**pv, "status": {**(pv.get("status") or {}), "phase": "Bound"}},
                                          subresource="status")
        claim = await self._bind_claim(pvc, pv)
        spec = pv.get("spec") or {}
        status = {"phase": "Bound", "accessModes": list(spec.get("accessModes") or []), "capacity": dict(spec.get("capacity") or {})}

        def bound(claim: Obj) -> None:
            claim["status"] = {**(claim.get("status") or {}), **status}
        await self._update_claim(claim, bound, subresource="status")
        for reason in ("WaitForFirstConsumer", "FailedBinding", "ExternalProvisioning"):
            self._announced.discard((meta.get("uid") or "", reason))

    async def _bind_claim(self, pvc: Obj, pv: Obj) -> Obj:
        """volumeName and the bind annotations."""
        def bind(claim: Obj) -> None:
            annotations = claim["metadata"].setdefault("annotations", {})
            if (claim.get("spec") or {}).get("volumeName") != _meta(pv)["name"]:
                annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
            annotations[ANN_BIND_COMPLETED] = "yes"
            claim["spec"]["volumeName"] = _meta(pv)["name"]
        return await self._update_claim(pvc, bind)

    async def _update_claim(self, pvc: Obj, change: Callable[[Obj], None], subresource: str | None = None) -> Obj:
        """An update of the claim (upstream's role grants update, not patch, of claims and their
        status); on a conflict (the scheduler or the StatefulSet controller wrote the claim
        meanwhile) read it once and try again."""
        meta = _meta(pvc)
        for attempt in range(2):
            claim = copy.deepcopy(pvc)
            change(claim)
            if claim == pvc:
                return pvc
            try:
                return await self.client.update(PERSISTENTVOLUMECLAIMS, claim, meta["namespace"],
                                                subresource=subresource)
            except errors.APIError as exc:
                if not errors.is_conflict(exc) or attempt:
                    raise
            pvc = await self.client.get(PERSISTENTVOLUMECLAIMS, meta["name"], meta["namespace"])
        return pvc

    async def _sync_volume(self, name: str) -> Result | None:
        """A volume whose claim is gone is Released, or deleted when its policy is Delete and we made it;
        an unclaimed new volume becomes Available."""
        store = self._store(self.volumes)
        pv = store.get(name) if store is not None else None
        if pv is None or _meta(pv).get("deletionTimestamp"):
            return None
        ref = (pv.get("spec") or {}).get("claimRef")
        phase = (pv.get("status") or {}).get("phase")
        if not ref:
            if phase in (None, "", "Pending"):
                await self._set_phase(pv, "Available")
            return None
        if not ref.get("uid"):
            return None  # pre-bound by name: waits for that claim
        claims = self._store(self.claims)
        claim = claims.get(f"{ref.get('namespace')}/{ref.get('name')}") if claims is not None else None
        if claim is not None and _meta(claim).get("uid") == ref.get("uid"):
            return None
        try:
            live = await self.client.get(PERSISTENTVOLUMECLAIMS, ref.get("name"), ref.get("namespace"))
            if _meta(live).get("uid") == ref.get("uid"):
                return None  # our cache is behind the claim
        except errors.APIError as exc:
            if not errors.is_not_found(exc):
                raise
        provisioned = (_meta(pv).get("annotations") or {}).get(ANN_PROVISIONED_BY) == self.provisioner
        if (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") == "Delete" and provisioned:
            try:
                await self.client.delete(PERSISTENTVOLUMES, name)
            except errors.APIError as exc:
                if not errors.is_not_found(exc):
                    raise
            return None
        if phase != "Released":
            await self._set_phase(pv, "Released")
        return None

    async def _set_phase(self, pv: Obj, phase: str) -> None:
        try:
            await self.client.update(PERSISTENTVOLUMES, {**pv, "status": {**(pv.get("status") or {}), "phase": phase}},
                                     subresource="status")
        except errors.APIError as exc:
            if not (errors.is_not_found(exc) or errors.is_conflict(exc)):
                raise
