"""Device-taint eviction: pods using a device with a NoExecute taint they do not tolerate are deleted.

Upstream's pkg/controller/devicetainteviction, keyed `("pod", ns/name)` or `("rule", name)`. A
pod's eviction time is the earliest, over the devices of the allocated claims reserved for it, of
the NoExecute taints (the ResourceSlice device's own, and DeviceTaintRules selecting the device)
plus the smallest `tolerationSeconds` of the result's NoExecute tolerations matching it (none:
at once; tolerated without seconds: never). When the time comes the pod gets the DisruptionTarget
condition (pods/status) and is deleted with its uid as precondition. A DeviceTaintRule's status
carries the `EvictionInProgress` condition, refreshed at most every 10 s (`rule_status.py` words it).
DeviceTaintRules are read only when the API server serves them (gate DRADeviceTaintRules).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from client import errors
from client.informer import Event
from client.resources import DEVICETAINTRULES, PODS, RESOURCECLAIMS, RESOURCESLICES
from client.rest import RestClient
from controllers import disruption_target, events, pod_claims, rule_status, timestamps
from controllers.reconciling import Result, Watch

log = logging.getLogger("haru.controllers.devicetainteviction")
Obj = dict[str, Any]
COMPONENT = "device-taint-eviction"
NO_EXECUTE = "NoExecute"
POOL_INDEX = "pool"
DEVICE_INDEX = "allocated-device"
CONDITION = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByDeviceTaintManager",
             "message": "Device Taint manager: deleting due to NoExecute taint"}


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def _pool_of(slice_: Obj) -> list[str]:
    spec = slice_.get("spec") or {}
    return [f"{spec.get('driver')}/{(spec.get('pool') or {}).get('name')}"]


def _allocated_devices(claim: Obj) -> list[str]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return [f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}"
            for r in (allocation.get("devices") or {}).get("results") or []]


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """resourceclaim.ToleratesTaint: effect and key when set, then Equal (the default) or Exists."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def rule_selects(rule: Obj, driver: str, pool: str, device: str) -> bool:
    """No selector selects nothing; an empty one everything; each set field must equal."""
    selector = (rule.get("spec") or {}).get("deviceSelector")
    if selector is None:
        return False
    return all(selector.get(name) in (None, "", value)
               for name, value in (("driver", driver), ("pool", pool), ("device", device)))


@dataclass(frozen=True)
class Origin:
    """Where a taint came from: a DeviceTaintRule (its uid) or a slice's device."""
    rule_uid: str = ""
    device: str = ""


@dataclass
class Eviction:
    when: float
    origins: set[Origin] = field(default_factory=set)


def _claims_seen(pod: Obj) -> tuple[Any, ...]:
    status = pod.get("status") or {}
    return (status.get("resourceClaimStatuses"), status.get("extendedResourceClaimStatus"),
            (pod.get("spec") or {}).get("nodeName"))


class DeviceTaintEvictionController:
    name = "device-taint-eviction"

    def __init__(self, client: RestClient, *, rule_status_period: float = rule_status.PERIOD) -> None:
        self.client = client
        self.rule_status_period = rule_status_period
        self.pods = Watch(PODS, self._pod_keys)
        self.claims = Watch(RESOURCECLAIMS, self._claim_keys, indexers={DEVICE_INDEX: _allocated_devices})
        self.slices = Watch(RESOURCESLICES, self._slice_keys, indexers={POOL_INDEX: _pool_of})
        self.rules = Watch(DEVICETAINTRULES, self._rule_keys)
        self.watches: list[Watch] = [self.pods, self.claims, self.slices]
        self.rules_served = False
        self._ctx: Any = None
        self._pending: dict[str, tuple[str, Eviction]] = {}  # pod key → (uid, eviction) not done yet
        self._evicted_by_rule: dict[str, int] = {}  # rule uid → pods evicted since we started
        # kube-apiserver sets a taint's timeAdded; when a server did not, the time we first saw it counts.
        self._first_seen: dict[tuple[Origin, str, str, str], float] = {}

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx
        try:
            await self.client.list(DEVICETAINTRULES, limit=1)
            self.rules_served = True
        except errors.APIError as exc:
            if exc.code not in (403, 404):
                raise
            log.info("DeviceTaintRules are not served (%s); only ResourceSlice taints evict", exc.code)
        if self.rules_served:
            self.watches.append(self.rules)

    # -- cache reads -------------------------------------------------------------------------

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    def _items(self, watch: Watch) -> list[Obj]:
        store = self._store(watch)
        return store.list() if store is not None else []

    def _device(self, driver: str, pool: str, name: str) -> Obj | None:
        """The device as the pool's newest generation publishes it (older slices are stale)."""
        store = self._store(self.slices)
        slices = store.by_index(POOL_INDEX, f"{driver}/{pool}") if store is not None else []
        if not slices:
            return None
        newest = max(int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0) for s in slices)
        for slice_ in slices:
            if int(((slice_.get("spec") or {}).get("pool") or {}).get("generation") or 0) != newest:
                continue
            for device in (slice_.get("spec") or {}).get("devices") or []:
                if device.get("name") == name:
                    return device
        return None

    def _taints(self, result: Obj, simulate: Obj | None) -> Iterable[tuple[Obj, Origin]]:
        """Every NoExecute taint on an allocated device. `simulate` is a rule treated as NoExecute."""
        driver, pool, name = result.get("driver") or "", result.get("pool") or "", result.get("device") or ""
        device = self._device(driver, pool, name)
        for taint in (device or {}).get("taints") or []:
            if taint.get("effect") == NO_EXECUTE:
                yield taint, Origin(device=f"{driver}/{pool}/{name}")
        rules = self._items(self.rules) if self.rules_served else []
        if simulate is not None:
            rules = [r for r in rules if _meta(r).get("uid") != _meta(simulate).get("uid")] + [simulate]
        for rule in rules:
            taint = (rule.get("spec") or {}).get("taint") or {}
            if rule is simulate:
                taint = {**taint, "effect": NO_EXECUTE}
            if taint.get("effect") == NO_EXECUTE and rule_selects(rule, driver, pool, name):
                yield taint, Origin(rule_uid=_meta(rule).get("uid") or "")

    def eviction_for(self, pod: Obj, simulate: Obj | None = None) -> Eviction | None:
        """When the pod must go and because of which taints; None when it may stay."""
        if not (pod.get("spec") or {}).get("nodeName"):
            return None
        store = self._store(self.claims)
        namespace = _meta(pod).get("namespace") or ""
        found: Eviction | None = None
        for named in pod_claims.used_claim_names(pod):
            claim = store.get(f"{namespace}/{named.name}") if store is not None else None
            allocation = ((claim or {}).get("status") or {}).get("allocation")
            if claim is None or not allocation:
                continue
            if named.check_owner and pod_claims.is_for_pod(pod, claim) is not None:
                continue
            if not pod_claims.is_reserved_for_pod(pod, claim):
                continue  # perhaps an earlier pod of the same name
            for result in (allocation.get("devices") or {}).get("results") or []:
                for taint, origin in self._taints(result, simulate):
                    when = self._taint_deadline(result, taint, origin)
                    if when is None:
                        continue
                    if found is None:
                        found = Eviction(when)
                    found.when = min(found.when, when)
                    found.origins.add(origin)
        return found

    def _added(self, taint: Obj, origin: Origin) -> float:
        added = timestamps.parse(taint.get("timeAdded"))
        if added is not None:
            return added
        seen = (origin, taint.get("key") or "", taint.get("value") or "", taint.get("effect") or "")
        return self._first_seen.setdefault(seen, time.time())

    def _taint_deadline(self, result: Obj, taint: Obj, origin: Origin) -> float | None:
        seconds: float | None = None
        for toleration in result.get("tolerations") or []:
            # Upstream counts only tolerations that name the NoExecute effect.
            if toleration.get("effect") != NO_EXECUTE or not tolerates(toleration, taint):
                continue
            if toleration.get("tolerationSeconds") is None:
                return None  # tolerated for ever
            value = max(0, int(toleration["tolerationSeconds"]))
            seconds = value if seconds is None else min(seconds, value)
        return self._added(taint, origin) + (seconds or 0)

    # -- events → keys -----------------------------------------------------------------------

    def _pod_key(self, namespace: str, name: str) -> tuple[str, str]:
        return ("pod", f"{namespace}/{name}")

    def _reserved_pods(self, claim: Obj | None) -> list[Hashable]:
        if not claim:
            return []
        namespace = _meta(claim).get("namespace") or ""
        return [self._pod_key(namespace, ref.get("name") or "")
                for ref in (claim.get("status") or {}).get("reservedFor") or []
                if ref.get("resource") == "pods" and not ref.get("apiGroup")]

    def _pod_keys(self, event: Event) -> list[Hashable]:
        pod = event.obj
        if event.type == "DELETED":
            self._pending.pop(event.key, None)
            return []
        if not pod_claims.uses_claims(pod) or not (pod.get("spec") or {}).get("nodeName"):
            return []
        old = event.old
        if old is not None and _claims_seen(old) == _claims_seen(pod):
            return []  # pods change often; only their claims matter here (and our own condition)
        return [("pod", event.key)]

    def _claim_keys(self, event: Event) -> list[Hashable]:
        new = None if event.type == "DELETED" else event.obj
        old = event.old if event.type != "DELETED" else event.obj
        if not ((new or {}).get("status") or {}).get("allocation") and \
                not ((old or {}).get("status") or {}).get("allocation"):
            return []
        return list(dict.fromkeys(self._reserved_pods(old) + self._reserved_pods(new)))

    def _pods_using(self, devices: Iterable[str]) -> list[Hashable]:
        store = self._store(self.claims)
        if store is None:
            return []
        keys: list[Hashable] = []
        for device in devices:
            for claim in store.by_index(DEVICE_INDEX, device):
                keys += self._reserved_pods(claim)
        return list(dict.fromkeys(keys))

    def _slice_keys(self, event: Event) -> list[Hashable]:
        def taints(slice_: Obj | None) -> dict[str, list[Obj]]:
            spec = (slice_ or {}).get("spec") or {}
            prefix = f"{spec.get('driver')}/{(spec.get('pool') or {}).get('name')}"
            return {f"{prefix}/{d.get('name')}": [t for t in d.get("taints") or [] if t.get("effect") == NO_EXECUTE]
                    for d in spec.get("devices") or []}
        before = taints(event.old if event.type == "MODIFIED" else (event.obj if event.type == "DELETED" else None))
        after = taints(None if event.type == "DELETED" else event.obj)
        changed = [d for d in set(before) | set(after) if before.get(d, []) != after.get(d, [])]
        return self._pods_using(changed)

    def _rule_keys(self, event: Event) -> list[Hashable]:
        keys: list[Hashable] = [] if event.type == "DELETED" else [("rule", event.key)]
        store = self._store(self.claims)
        if store is None:
            return keys
        rules = [r for r in (event.obj, event.old) if r is not None]
        for claim in store.list():
            for device in _allocated_devices(claim):
                driver, pool, name = device.split("/", 2)
                if any(rule_selects(r, driver, pool, name) for r in rules):
                    keys += self._reserved_pods(claim)
                    break
        return list(dict.fromkeys(keys))

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> Result | None:
        assert isinstance(key, tuple) and len(key) == 2
        kind, name = key
        if kind == "pod":
            return await self.sync_pod(name)
        if kind == "rule":
            return await self.sync_rule(name)
        return None

    async def sync_pod(self, key: str) -> Result | None:
        store = self._store(self.pods)
        pod = store.get(key) if store is not None else None
        if pod is None or _meta(pod).get("deletionTimestamp"):
            self._pending.pop(key, None)
            return None
        eviction = self.eviction_for(pod)
        if eviction is None:
            if self._pending.pop(key, None) is not None:
                await events.record(self.client, COMPONENT, pod, "Normal", "DeviceTaintManagerEviction",
                                    "Cancelling deletion")
            return None
        self._pending[key] = (_meta(pod).get("uid") or "", eviction)
        for origin in eviction.origins:
            if origin.rule_uid:
                self._queue_rule(origin.rule_uid, 0.0)
        delay = eviction.when - time.time()
        if delay > 0:
            return Result(requeue_after=delay)
        deleted = await self._evict(pod)
        self._pending.pop(key, None)
        for origin in eviction.origins if deleted else ():
            if origin.rule_uid:
                self._evicted_by_rule[origin.rule_uid] = self._evicted_by_rule.get(origin.rule_uid, 0) + 1
                # Not at once: the rule status reads the pod cache, which has to see the deletion.
                self._queue_rule(origin.rule_uid, self.rule_status_period)
        return None

    def _queue_rule(self, uid: str, after: float) -> None:
        for rule in self._items(self.rules) if self.rules_served else []:
            if _meta(rule).get("uid") == uid and self._ctx is not None:
                self._ctx.queue.add_after(("rule", _meta(rule)["name"]), after)

    async def _evict(self, cached: Obj) -> bool:
        """Condition, then delete; False when the pod was gone, replaced or already going."""
        meta = _meta(cached)
        namespace, name, uid = meta.get("namespace"), meta.get("name") or "", meta.get("uid")
        try:
            pod = await self.client.get(PODS, name, namespace)
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return False
            raise
        if _meta(pod).get("uid") != uid or _meta(pod).get("deletionTimestamp"):
            return False  # replaced by another pod of that name, or already going
        await events.record(self.client, COMPONENT, pod, "Normal", "DeviceTaintManagerEviction", "Marking for deletion")
        if not await disruption_target.evict(self.client, pod, CONDITION):
            return False
        log.info("evicted pod %s/%s: a device it uses has a NoExecute taint it does not tolerate", namespace, name)
        return True

    # -- DeviceTaintRule status --------------------------------------------------------------

    async def sync_rule(self, name: str) -> Result | None:
        store = self._store(self.rules) if self.rules_served else None
        rule = store.get(name) if store is not None else None
        if rule is None:
            return None
        existing = rule_status.current(rule)
        now = time.time()
        if existing is not None and existing.get("observedGeneration") == _meta(rule).get("generation"):
            since = now - (timestamps.parse(existing.get("lastTransitionTime")) or 0.0)
            if since < self.rule_status_period:
                return Result(requeue_after=self.rule_status_period - since)
        effect = ((rule.get("spec") or {}).get("taint") or {}).get("effect")
        counts = rule_status.Counts(evicted=self._evicted_by_rule.get(_meta(rule).get("uid") or "", 0))
        if effect in (NO_EXECUTE, "None"):
            simulate = rule if effect == "None" else None
            counts.pending_pods, counts.pending_namespaces = self._count_pending(rule, simulate)
        if effect == "None":
            counts.published_devices, counts.allocated_devices = self._count_devices(rule)
        wanted = rule_status.condition(rule, counts)
        if existing is not None and all(existing.get(k) == v for k, v in wanted.items()):
            return None
        wanted["lastTransitionTime"] = datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        others = [c for c in (rule.get("status") or {}).get("conditions") or [] if c.get("type") != wanted["type"]]
        # A merge patch carrying the uid: only this rule (not a namesake) and no conflict with
        # our own previous write that the cache may not show yet.
        patch = {"metadata": {"uid": _meta(rule).get("uid")}, "status": {"conditions": others + [wanted]}}
        try:
            await self.client.patch(DEVICETAINTRULES, _meta(rule)["name"], patch, subresource="status")
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return None
            raise
        return None

    def _count_pending(self, rule: Obj, simulate: Obj | None) -> tuple[int, int]:
        uid = _meta(rule).get("uid") or ""
        namespaces: set[str] = set()
        pending = 0
        for pod in self._items(self.pods):
            if _meta(pod).get("deletionTimestamp"):
                continue
            eviction = self.eviction_for(pod, simulate)
            if eviction is not None and Origin(rule_uid=uid) in eviction.origins:
                pending += 1
                namespaces.add(_meta(pod).get("namespace") or "")
        return pending, len(namespaces)

    def _count_devices(self, rule: Obj) -> tuple[int, int]:
        published = 0
        newest: dict[str, int] = {}
        slices = self._items(self.slices)
        for slice_ in slices:
            pool = _pool_of(slice_)[0]
            generation = int(((slice_.get("spec") or {}).get("pool") or {}).get("generation") or 0)
            newest[pool] = max(newest.get(pool, generation), generation)
        for slice_ in slices:
            spec = slice_.get("spec") or {}
            pool = _pool_of(slice_)[0]
            if int((spec.get("pool") or {}).get("generation") or 0) != newest[pool]:
                continue
            driver, pool_name = spec.get("driver") or "", (spec.get("pool") or {}).get("name") or ""
            published += sum(1 for d in spec.get("devices") or [] if rule_selects(rule, driver, pool_name, d.get("name") or ""))
        allocated = 0
        for claim in self._items(self.claims):
            for device in _allocated_devices(claim):
                driver, pool_name, name = device.split("/", 2)
                allocated += rule_selects(rule, driver, pool_name, name)
        return published, allocated
