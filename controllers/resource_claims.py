"""The ResourceClaim controller: claims for pods' ResourceClaimTemplate entries, and claims let go.

Upstream's pkg/controller/resourceclaim, keyed `("pod", ns/name)`, `("claim", ns/name)` or, with
DRAWorkloadResourceClaims, `("podgroup", ns/name)`:
* a pod: for each `spec.resourceClaims[]` entry with a template whose claim is not recorded (or
  was lost), reuse a claim the pod owns with the `pod-claim-name` annotation, else create one from
  the template (generateName `<pod>-<entry>-`, an owning controller reference); record them all in
  `status.resourceClaimStatuses` with one server-side apply. A pod bound by hand gets its allocated
  claims reserved (`status.reservedFor`).
* a claim: drop `reservedFor` entries of pods that are gone, replaced or done; when none is left,
  clear the allocation of a claim under `delete-protection` and then remove that finalizer; a
  generated claim whose pod is done is deleted (a pod that is gone is left to the garbage collector).
  A PodGroup's reservation stays while that PodGroup exists.
* a PodGroup (KEP-5729): one claim per template entry, owned by the group, recorded in its
  `status.resourceClaimStatuses`; a pod entry that matches a group entry (`pod_group_claims.py`)
  records the group's claim instead of getting its own.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from client import errors
from client.informer import Event
from client.resources import PODGROUPS, PODS, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES
from client.rest import RestClient
from controllers import events, features as feature_gates, pod_claims, pod_group_claims
from controllers.reconciling import Result, Watch

log = logging.getLogger("haru.controllers.resourceclaim")
Obj = dict[str, Any]
FIELD_MANAGER = "ResourceClaimController"
COMPONENT = "resource_claim"
POD_INDEX = "pod-resource-claim-index"
OWNER_INDEX = "claim-pod-owner-index"
MAX_DELETED = 500
MAX_BASE_LEN = 57  # a 63-character name less "-" and the five random characters


def generate_name(pod: str, entry: str) -> str:
    """`<pod>-<entry>-`; past 57 characters both parts are cut in proportion, so a long pod name
    does not swallow the entry name (the API server would cut only at the end)."""
    base = f"{pod}-{entry}-"
    if len(base) <= MAX_BASE_LEN:
        return base
    return pod[:len(pod) * MAX_BASE_LEN // len(base)] + "-" + entry[:len(entry) * MAX_BASE_LEN // len(base)]


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _owner_uids(claim: Obj) -> list[str]:
    return [ref["uid"] for ref in _meta(claim).get("ownerReferences") or [] if ref.get("uid")]


class ResourceClaimController:
    name = "resource-claim"

    def __init__(self, client: RestClient, features: feature_gates.Features | None = None) -> None:
        self.client = client
        self.features = feature_gates.defaults() if features is None else features
        # With DRAWorkloadResourceClaims, PodGroups get claims of their own (pod_group_claims.py).
        self.group_claims = feature_gates.group_claims(self.features)
        pod_indexers = {POD_INDEX: pod_claims.claim_index}
        if self.group_claims:
            pod_indexers[pod_group_claims.GROUP_INDEX] = pod_group_claims.group_index
        self.pods = Watch(PODS, self._pod_keys, indexers=pod_indexers)
        claim_indexers = {OWNER_INDEX: _owner_uids}
        if self.group_claims:
            claim_indexers[pod_group_claims.RESERVED_INDEX] = pod_group_claims.reserved_index
        self.claims = Watch(RESOURCECLAIMS, self._claim_keys, indexers=claim_indexers)
        self.templates = Watch(RESOURCECLAIMTEMPLATES, lambda event: [])
        self.watches = [self.pods, self.claims, self.templates]
        self.pod_groups = Watch(PODGROUPS, self._group_keys)
        if self.group_claims:
            self.watches.append(self.pod_groups)
        self._ctx: Any = None
        # Pods seen deleted: their reservations can go without asking the API server.
        self._deleted: OrderedDict[str, None] = OrderedDict()
        # Claims we created that the informer may not have yet (client-go's mutation cache).
        self._created: dict[str, list[Obj]] = {}

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    # -- cache reads -------------------------------------------------------------------------

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    def _cached(self, watch: Watch, key: str) -> Obj | None:
        store = self._store(watch)
        return store.get(key) if store is not None else None

    def _claims_owned_by(self, uid: str) -> list[Obj]:
        store = self._store(self.claims)
        owned = list(store.by_index(OWNER_INDEX, uid)) if store is not None else []
        known = {_meta(c).get("uid") for c in owned}
        pending = [c for c in self._created.get(uid, []) if _meta(c).get("uid") not in known]
        if not pending:
            self._created.pop(uid, None)
        return owned + pending

    # -- events → keys -----------------------------------------------------------------------

    def _pod_keys(self, event: Event) -> list[Hashable]:
        pod = event.obj
        if not pod_claims.uses_claims(pod):
            return []
        meta = _meta(pod)
        deleted = event.type == "DELETED"
        if deleted:
            self._remember_deleted(meta.get("uid") or "")
        keys: list[Hashable] = []
        if deleted or pod_claims.is_terminal(pod) or (meta.get("deletionTimestamp") and not pod["spec"].get("nodeName")):
            # The pod will not use its claims any more: their reservations may go.
            keys += [("claim", f"{meta.get('namespace')}/{named.name}") for named in pod_claims.used_claim_names(pod)]
        if not deleted and not meta.get("deletionTimestamp") and (pod.get("spec") or {}).get("resourceClaims"):
            keys.append(("pod", event.key))
        return keys

    def _claim_keys(self, event: Event) -> list[Hashable]:
        meta = _meta(event.obj)
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        keys: list[Hashable] = [] if event.type == "DELETED" else [("claim", key)]
        store = self._store(self.pods)
        if store is not None:
            # A claim appearing, allocated or gone may give its pods work (status, reservation).
            keys += [("pod", f"{_meta(p).get('namespace')}/{_meta(p).get('name')}")
                     for p in store.by_index(POD_INDEX, key) if not _meta(p).get("deletionTimestamp")]
        return keys

    def _group_keys(self, event: Event) -> list[Hashable]:
        """A PodGroup's own claims, its pods (they may now find the group's claim), and once it is
        deleted the claims reserved for it."""
        meta = _meta(event.obj)
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        keys: list[Hashable] = [] if event.type == "DELETED" else [("podgroup", key)]
        claims = self._store(self.claims)
        if event.type == "DELETED" and claims is not None:
            # Its reservations go with it.
            keys += [("claim", f"{_meta(c).get('namespace')}/{_meta(c).get('name')}")
                     for c in claims.by_index(pod_group_claims.RESERVED_INDEX, key)]
        store = self._store(self.pods)
        if store is not None:
            keys += [("pod", f"{_meta(p).get('namespace')}/{_meta(p).get('name')}")
                     for p in store.by_index(pod_group_claims.GROUP_INDEX, key) if not _meta(p).get("deletionTimestamp")]
        return keys

    def _remember_deleted(self, uid: str) -> None:
        if not uid:
            return
        self._deleted[uid] = None
        self._deleted.move_to_end(uid)
        while len(self._deleted) > MAX_DELETED:
            self._deleted.popitem(last=False)

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> Result | None:
        assert isinstance(key, tuple) and len(key) == 2
        kind, name = key
        if kind == "pod":
            await self.sync_pod(name)
        elif kind == "claim":
            await self.sync_claim(name)
        elif kind == "podgroup":
            await self.sync_pod_group(name)
        return None

    async def sync_pod(self, key: str) -> None:
        pod = self._cached(self.pods, key)
        if pod is None or _meta(pod).get("deletionTimestamp"):
            return
        namespace = _meta(pod).get("namespace") or ""
        recorded: dict[str, str] = {}
        for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
            try:
                created = await self._handle_entry(pod, entry)
            except Exception as exc:
                await events.record(self.client, COMPONENT, pod, "Warning", "FailedResourceClaimCreation",
                                    f"PodResourceClaim {entry.get('name')}: {_text(exc)}")
                raise RuntimeError(f"pod {key}, PodResourceClaim {entry.get('name')}: {_text(exc)}") from exc
            if created is not None:
                recorded[entry["name"]] = created
        if recorded:
            await self._record_statuses(pod, recorded)
            return  # the status change brings the pod back, with the claims named
        if not (pod.get("spec") or {}).get("nodeName"):
            return  # the scheduler reserves claims for the pods it binds
        for _, named in pod_claims.claim_names(pod):
            claim = self._cached(self.claims, f"{namespace}/{named.name}")
            if claim is None:
                return
            if named.check_owner and (reason := pod_claims.is_for_pod(pod, claim)):
                raise RuntimeError(reason)
            status = claim.get("status") or {}
            if pod_group_claims.owned_by_group_of(pod, claim):
                continue  # the group's claim: the scheduler reserves it for the PodGroup
            if status.get("allocation") and not pod_claims.is_reserved_for_pod(pod, claim) \
                    and pod_claims.can_be_reserved(claim):
                await self._reserve(pod, claim)

    async def _handle_entry(self, pod: Obj, entry: Obj) -> str | None:
        """The name of a claim to record for this entry, or None when nothing changes."""
        if self.group_claims and pod_group_claims.group_of(pod):
            shared = self._group_claim_for(pod, entry)
            if shared is not None:
                return shared or None
        try:
            named = pod_claims.name_for(pod, entry)
        except pod_claims.NotCreatedYet:
            named = None
        except pod_claims.Unsupported as exc:
            raise RuntimeError(f"checking for claim before creating it: {exc}") from None
        namespace = _meta(pod).get("namespace") or ""
        if named is not None:
            if named.name is None:
                return None  # recorded as not needed
            existing = self._cached(self.claims, f"{namespace}/{named.name}")
            if existing is not None:
                reason = pod_claims.is_for_pod(pod, existing) if named.check_owner else None
                if reason is None:
                    return None
                log.error("%s: the claim made for the pod is no longer the pod's (%s); creating a new one",
                          _meta(pod).get("name"), reason)
        template_name = entry.get("resourceClaimTemplateName")
        if not template_name:
            return None
        claim = self._find_generated(pod, entry)
        if claim is None:
            claim = await self._create_from_template(pod, entry, template_name)
        return str(_meta(claim).get("name"))

    def _group_claim_for(self, pod: Obj, entry: Obj) -> str | None:
        """For a pod of a PodGroup: "" when the entry is the group's but there is nothing (new) to
        record, the group's claim name to record, or None when the entry is the pod's own."""
        namespace = _meta(pod).get("namespace") or ""
        group = self._cached(self.pod_groups, f"{namespace}/{pod_group_claims.group_of(pod)}")
        if group is None:
            return ""  # the group is not here yet: its arrival brings the pod back
        shared = pod_group_claims.shared_entry(group, entry)
        if shared is None:
            return None
        if not entry.get("resourceClaimTemplateName"):
            return ""  # a claim named directly: nothing to create or record
        name = pod_group_claims.recorded(group, entry["name"])
        if name is None:
            claim = pod_group_claims.generated(group, entry["name"], self._claims_owned_by(_meta(group).get("uid") or ""))
            name = _meta(claim).get("name") if claim is not None else None
        if name is None:
            return ""  # the group's claim is being made: its event brings the pod back
        try:
            known = pod_claims.name_for(pod, entry).name
        except pod_claims.NotCreatedYet:
            known = None
        return "" if known == name else name

    async def sync_pod_group(self, key: str) -> None:
        """One claim per template entry of the group, recorded in the group's status."""
        group = self._cached(self.pod_groups, key)
        if group is None or _meta(group).get("deletionTimestamp"):
            return
        meta = _meta(group)
        owned = self._claims_owned_by(meta.get("uid") or "")
        statuses: dict[str, str] = {}
        changed = False
        for entry in (group.get("spec") or {}).get("resourceClaims") or []:
            template_name = entry.get("resourceClaimTemplateName")
            if not template_name:
                continue
            name = pod_group_claims.recorded(group, entry["name"])
            if name is not None and self._cached(self.claims, f"{meta.get('namespace')}/{name}") is not None:
                statuses[entry["name"]] = name
                continue
            claim = pod_group_claims.generated(group, entry["name"], owned)
            if claim is None:
                try:
                    claim = await self._create_claim(group, pod_group_claims.owner_reference(group), entry,
                                                     template_name)
                except Exception as exc:
                    await events.record(self.client, COMPONENT, {**group, "kind": "PodGroup",
                                                                 "apiVersion": pod_group_claims.API_VERSION},
                                        "Warning", "FailedResourceClaimCreation",
                                        f"PodGroupResourceClaim {entry.get('name')}: {_text(exc)}")
                    raise RuntimeError(f"podgroup {key}, PodGroupResourceClaim {entry.get('name')}: "
                                       f"{_text(exc)}") from exc
            statuses[entry["name"]] = str(_meta(claim).get("name"))
            changed = changed or statuses[entry["name"]] != name
        if changed:
            await self._record_group_statuses(group, statuses)

    async def _record_group_statuses(self, group: Obj, recorded: dict[str, str]) -> None:
        meta = _meta(group)
        statuses = [{"name": entry, "resourceClaimName": claim} for entry, claim in sorted(recorded.items())]
        body = {"apiVersion": pod_group_claims.API_VERSION, "kind": "PodGroup",
                "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")},
                "status": {"resourceClaimStatuses": statuses}}
        try:
            await self.client.patch(PODGROUPS, meta["name"], body, meta.get("namespace"), patch_type="apply",
                                    subresource="status", field_manager=FIELD_MANAGER, force=True)
        except errors.APIError as exc:
            raise RuntimeError(f"update podgroup {meta.get('namespace')}/{meta.get('name')} "
                               f"ResourceClaimStatuses: {exc}") from exc

    def _find_generated(self, pod: Obj, entry: Obj) -> Obj | None:
        """A claim the pod owns that was made for this entry (created before a crash, say)."""
        meta = _meta(pod)
        legacy = f"{meta.get('name')}-{entry.get('name')}"  # Kubernetes 1.27's deterministic name
        for claim in self._claims_owned_by(meta.get("uid") or ""):
            annotations = _meta(claim).get("annotations") or {}
            if pod_claims.POD_CLAIM_NAME in annotations:
                if annotations[pod_claims.POD_CLAIM_NAME] == entry.get("name"):
                    return claim
            elif _meta(claim).get("name") == legacy:
                return claim
        return None

    async def _create_from_template(self, pod: Obj, entry: Obj, template_name: str) -> Obj:
        meta = _meta(pod)
        owner = {"apiVersion": "v1", "kind": "Pod", "name": meta.get("name"), "uid": meta.get("uid"),
                 "controller": True, "blockOwnerDeletion": True}
        return await self._create_claim(pod, owner, entry, template_name)

    async def _create_claim(self, owner_obj: Obj, owner: Obj, entry: Obj, template_name: str) -> Obj:
        """A claim from the template for a pod's or a PodGroup's entry, `owner` its controller."""
        meta = _meta(owner_obj)
        namespace = meta.get("namespace") or ""
        template = self._cached(self.templates, f"{namespace}/{template_name}")
        if template is None:
            raise LookupError(f'resource claim template "{template_name}": '
                              f'resourceclaimtemplate.resource.k8s.io "{template_name}" not found')
        spec = template.get("spec") or {}
        template_meta = spec.get("metadata") or {}
        annotations = {**(template_meta.get("annotations") or {}), pod_claims.POD_CLAIM_NAME: entry["name"]}
        claim_meta: Obj = {
            "generateName": generate_name(meta.get("name") or "", entry["name"]),
            "namespace": namespace,
            "ownerReferences": [owner],
            "annotations": annotations,
        }
        if template_meta.get("labels"):
            claim_meta["labels"] = dict(template_meta["labels"])
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": claim_meta,
                "spec": spec.get("spec") or {}}
        try:
            created = await self.client.create(RESOURCECLAIMS, body, namespace)
        except errors.APIError as exc:
            raise RuntimeError(f"create ResourceClaim : {exc}") from exc
        self._created.setdefault(meta.get("uid") or "", []).append(created)
        log.info("%s %s/%s: created ResourceClaim %s for %s", owner["kind"], namespace, meta.get("name"),
                 _meta(created).get("name"), entry["name"])
        return created

    async def _record_statuses(self, pod: Obj, recorded: dict[str, str]) -> None:
        meta = _meta(pod)
        statuses = [{"name": entry, "resourceClaimName": claim} for entry, claim in sorted(recorded.items())]
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")},
                "status": {"resourceClaimStatuses": statuses}}
        try:
            await self.client.patch(PODS, meta["name"], body, meta.get("namespace"), patch_type="apply",
                                    subresource="status", field_manager=FIELD_MANAGER, force=True)
        except errors.APIError as exc:
            raise RuntimeError(f"update pod {meta.get('namespace')}/{meta.get('name')} ResourceClaimStatuses: {exc}") \
                from exc

    async def _reserve(self, pod: Obj, claim: Obj) -> None:
        meta = _meta(pod)
        status = dict(claim.get("status") or {})
        status["reservedFor"] = list(status.get("reservedFor") or []) + [
            {"resource": "pods", "name": meta.get("name"), "uid": meta.get("uid")}]
        try:
            await self.client.update(RESOURCECLAIMS, {**claim, "status": status}, subresource="status")
        except errors.APIError as exc:
            raise RuntimeError(f"reserve claim for pod: {exc}") from exc
        log.info("claim %s/%s reserved for pod %s", _meta(claim).get("namespace"), _meta(claim).get("name"),
                 meta.get("name"))

    # -- claims ------------------------------------------------------------------------------

    async def _still_used(self, claim: Obj, ref: Obj) -> bool:
        """Whether a pod in reservedFor may still run. A pod the cache lacks is asked for: removing
        a reservation the scheduler just made for a pod we have not seen would be wrong."""
        uid = ref.get("uid")
        if uid in self._deleted:
            return False
        namespace = _meta(claim).get("namespace") or ""
        pod = self._cached(self.pods, f"{namespace}/{ref.get('name')}")
        if pod is None:
            try:
                pod = await self.client.get(PODS, ref.get("name") or "", namespace)
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    return False
                raise
        if _meta(pod).get("uid") != uid:
            return False
        return not pod_claims.is_done(pod)

    async def _group_exists(self, claim: Obj, ref: Obj) -> bool:
        """A PodGroup reservation stays while that PodGroup (same uid) exists."""
        namespace = _meta(claim).get("namespace") or ""
        group = self._cached(self.pod_groups, f"{namespace}/{ref.get('name')}")
        if group is None:
            try:
                group = await self.client.get(PODGROUPS, ref.get("name") or "", namespace)
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    return False
                raise
        return _meta(group).get("uid") == ref.get("uid")

    async def sync_claim(self, key: str) -> None:
        claim = self._cached(self.claims, key)
        if claim is None:
            return
        reserved = (claim.get("status") or {}).get("reservedFor") or []
        valid = []
        for ref in reserved:
            if ref.get("resource") == "pods" and not ref.get("apiGroup"):
                if await self._still_used(claim, ref):
                    valid.append(ref)
            elif self.group_claims and (ref.get("apiGroup"), ref.get("resource")) == ("scheduling.k8s.io", "podgroups"):
                if await self._group_exists(claim, ref):
                    valid.append(ref)
            else:
                valid.append(ref)  # other consumers are not ours to judge
        protected = pod_claims.DELETE_PROTECTION in (_meta(claim).get("finalizers") or [])
        if len(valid) < len(reserved):
            status = {**(claim.get("status") or {}), "reservedFor": valid or None}
            if not valid and protected:
                # Allocated by the scheduler; releasing the devices is clearing the allocation.
                status.pop("allocation", None)
            claim = await self.client.update(RESOURCECLAIMS, {**claim, "status": status}, subresource="status")
            log.info("claim %s: %d stale reservation(s) removed%s", key, len(reserved) - len(valid),
                     "; deallocated" if not valid and protected else "")
            if protected and not (claim.get("status") or {}).get("allocation"):
                await self._remove_protection(claim)
        elif protected and _meta(claim).get("deletionTimestamp") and not valid:
            if (claim.get("status") or {}).get("allocation"):
                # Allocated, unused, then deleted: release the devices before letting it go.
                status = {k: v for k, v in (claim.get("status") or {}).items() if k != "allocation"}
                claim = await self.client.update(RESOURCECLAIMS, {**claim, "status": status}, subresource="status")
            await self._remove_protection(claim)
        if not valid:
            await self._delete_if_pod_done(claim)

    async def _remove_protection(self, claim: Obj) -> None:
        meta = _meta(claim)
        finalizers = [f for f in meta.get("finalizers") or [] if f != pod_claims.DELETE_PROTECTION]
        try:
            await self.client.update(RESOURCECLAIMS, {**claim, "metadata": {**meta, "finalizers": finalizers}})
        except errors.APIError as exc:
            if not errors.is_not_found(exc):
                raise

    async def _delete_if_pod_done(self, claim: Obj) -> None:
        owner = pod_claims.owning_pod(claim)
        if owner is None:
            return
        meta = _meta(claim)
        pod = self._cached(self.pods, f"{meta.get('namespace')}/{owner[0]}")
        if pod is None:
            return  # perhaps not in our cache yet; if it is truly gone, the garbage collector acts
        if _meta(pod).get("uid") == owner[1] and not pod_claims.is_done(pod):
            return
        if meta.get("deletionTimestamp"):
            return
        log.info("deleting unused generated claim %s/%s (pod %s)", meta.get("namespace"), meta.get("name"), owner[0])
        try:
            await self.client.delete(RESOURCECLAIMS, meta["name"], meta.get("namespace"))
        except errors.APIError as exc:
            if not errors.is_not_found(exc):
                raise RuntimeError(f"delete claim: {exc}") from exc


def _text(exc: BaseException) -> str:
    return str(exc.args[0]) if isinstance(exc, LookupError) and exc.args else str(exc)
