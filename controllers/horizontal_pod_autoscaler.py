"""The HorizontalPodAutoscaler controller (upstream's pkg/controller/podautoscaler/horizontal.go), keyed
`namespace/name`, every `sync_period` (15 s) per HPA.

One reconcile: read the target's `scale` subresource; a target at 0 replicas with minReplicas > 0
is left alone (ScalingActive False, ScalingDisabled); outside min/max it is brought inside; else
every metric proposes a count (`hpa_metrics.py`), the largest wins, and `hpa_behavior.py` stabilizes
and limits it. A change is written through `/scale` with a SuccessfulRescale event; the status
(currentReplicas, desiredReplicas, currentMetrics, lastScaleTime, observedGeneration, conditions
AbleToScale, ScalingActive, ScalingLimited) is written when it changed. The clock is injectable.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Hashable
from typing import Any

from client import cache, errors
from client.informer import Event
from client.resources import DEPLOYMENTS, PODS, REPLICASETS, STATEFULSETS, Resource
from client.rest import RestClient
from controllers import (events, hpa_behavior as behavior, hpa_metrics as metrics, hpa_replicas as calc, quantities,
                         stale_cache, timestamps)
from controllers.reconciling import Result, Watch

log = logging.getLogger("haru.controllers.hpa")
COMPONENT = "horizontal-pod-autoscaler"
HPAS = Resource("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler",
                verbs=frozenset({"get", "list", "watch", "update", "patch"}))
REPLICATION_CONTROLLERS = Resource("", "v1", "replicationcontrollers", "ReplicationController")
SCALABLE = {("apps", "Deployment"): DEPLOYMENTS, ("apps", "ReplicaSet"): REPLICASETS,
            ("apps", "StatefulSet"): STATEFULSETS, ("", "ReplicationController"): REPLICATION_CONTROLLERS}
Obj = dict[str, Any]


class Failed(Exception):
    """A reconcile that recorded its failure in the status and events."""


def set_condition(hpa: Obj, kind: str, status: str, reason: str, message: str, now: float) -> None:
    """Upstream's setCondition: the transition time moves only when the status does."""
    conditions = hpa.setdefault("status", {}).setdefault("conditions", [])
    for c in conditions:
        if c.get("type") == kind:
            if c.get("status") != status:
                c["lastTransitionTime"] = timestamps.format(now)
            c.update(status=status, reason=reason, message=message)
            return
    conditions.append({"type": kind, "status": status, "lastTransitionTime": timestamps.format(now),
                       "reason": reason, "message": message})


class HorizontalPodAutoscalerController:
    name = "horizontal-pod-autoscaler"

    def __init__(self, client: RestClient, *, sync_period: float = 15.0, tolerance: float = 0.1,
                 clock: Callable[[], float] = time.time) -> None:
        self.client, self.sync_period, self.tolerance, self.clock = client, sync_period, tolerance, clock
        self.hpas = Watch(HPAS, self._hpa_keys)
        self.watches = [self.hpas]
        self.reader = metrics.Reader(client)
        self.states: dict[str, behavior.State] = {}
        self._ctx: Any = None
        self.writes = stale_cache.LastWrites()

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    @staticmethod
    def _hpa_keys(event: Event) -> list[Hashable]:
        """A new HPA or a new spec is looked at now; status writes (ours) wait for the next sync, as
        upstream's queue holds every HPA for the sync period."""
        if event.type == "MODIFIED" and event.old is not None:
            if (event.old.get("metadata") or {}).get("generation") == (event.obj.get("metadata") or {}).get("generation"):
                return []
        return [event.key]

    def _cached(self, key: str) -> Obj | None:
        informer = self._ctx.informer(self.hpas) if self._ctx is not None else None
        return informer.store.get(key) if informer is not None else None

    async def reconcile(self, key: Hashable) -> Result | None:
        found = self._cached(str(key))
        if found is None or (found.get("metadata") or {}).get("deletionTimestamp"):
            self.states.pop(str(key), None)
            self.writes.forget(key)
            return None
        if not self.writes.caught_up(key, self._ctx, self.watches):
            return Result(requeue_after=stale_cache.REQUEUE)  # our last status write is not in the cache yet
        hpa = copy.deepcopy(found)
        original = copy.deepcopy(found.get("status") or {})
        try:
            await self._autoscale(str(key), hpa, original)
        except (errors.APIError, Failed) as exc:
            # Upstream logs the error and looks again one sync period later, not sooner.
            log.warning("%s: %s", key, exc)
        return Result(requeue_after=self.sync_period)

    async def event(self, hpa: Obj, kind: str, reason: str, message: str) -> None:
        await events.record(self.client, COMPONENT, hpa, kind, reason, message)

    async def _write_status(self, hpa: Obj, original: Obj) -> None:
        if hpa.get("status") == original:
            return
        try:
            self.writes.wrote(cache.key_of(hpa), HPAS, await self.client.update(HPAS, hpa, subresource="status"))
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return
            raise

    def _set_status(self, hpa: Obj, current: int, desired: int, statuses: list[Obj] | None, rescaled: bool,
                    now: float) -> None:
        status = hpa.setdefault("status", {})
        status["observedGeneration"] = (hpa.get("metadata") or {}).get("generation")
        status["currentReplicas"] = current
        status["desiredReplicas"] = desired
        if statuses:
            status["currentMetrics"] = statuses
        else:
            status.pop("currentMetrics", None)
        if rescaled:
            status["lastScaleTime"] = timestamps.format(now)
        if status.get("observedGeneration") is None:
            status.pop("observedGeneration")

    async def _autoscale(self, key: str, hpa: Obj, original: Obj) -> None:
        now = self.clock()
        spec, meta = hpa.get("spec") or {}, hpa["metadata"]
        namespace = meta.get("namespace") or "default"
        ref = spec.get("scaleTargetRef") or {}
        reference = f"{ref.get('kind')}/{namespace}/{ref.get('name')}"
        group = (ref.get("apiVersion") or "").rpartition("/")[0]
        target = SCALABLE.get((group, ref.get("kind") or ""))
        hpa.setdefault("status", {}).setdefault("currentReplicas", 0)
        hpa["status"].setdefault("desiredReplicas", 0)
        try:
            if target is None:
                raise errors.APIError(404, "NotFound", f'no matches for kind "{ref.get("kind")}" in group "{group}"')
            scale = await self.client.get(target, ref.get("name", ""), namespace, subresource="scale")
        except errors.APIError as exc:
            await self.event(hpa, "Warning", "FailedGetScale", exc.message)
            set_condition(hpa, "AbleToScale", "False", "FailedGetScale",
                          f"the HPA controller was unable to get the target's current scale: {exc.message}", now)
            self._set_status(hpa, hpa["status"]["currentReplicas"], hpa["status"]["desiredReplicas"], None, False, now)
            await self._write_status(hpa, original)
            raise Failed(f"failed to query scale subresource for {reference}: {exc.message}") from None
        set_condition(hpa, "AbleToScale", "True", "SucceededGetScale",
                      "the HPA controller was able to get the target's current scale", now)
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        status_replicas = int((scale.get("status") or {}).get("replicas") or 0)
        state = self.states.setdefault(key, behavior.State())
        if not state.recommendations:
            state.recommendations.append(behavior.Recommendation(current, now))
        min_replicas = 1 if spec.get("minReplicas") is None else int(spec["minReplicas"])
        max_replicas = int(spec.get("maxReplicas") or 0)
        statuses: list[Obj] = []
        rescale, reason, desired = False, "", 0
        if current == 0 and min_replicas != 0:
            set_condition(hpa, "ScalingActive", "False", "ScalingDisabled",
                          "scaling is disabled since the replica count of the target is zero", now)
        elif current > max_replicas:
            reason, desired, rescale = "Current number of replicas above Spec.MaxReplicas", max_replicas, True
        elif current < min_replicas:
            reason, desired, rescale = "Current number of replicas below Spec.MinReplicas", min_replicas, True
        else:
            proposed, name, statuses, failure = await self._compute(hpa, scale, current, status_replicas, now)
            if proposed is None:
                self._set_status(hpa, current, hpa["status"]["desiredReplicas"], statuses, False, now)
                await self._write_status(hpa, original)
                await self.event(hpa, "Warning", "FailedComputeMetricsReplicas", failure)
                raise Failed(f"failed to compute desired number of replicas based on listed metrics for "
                                   f"{reference}: {failure}")
            if proposed > current:
                reason = f"{name} above target"
            elif proposed < current:
                reason = "All metrics below target"
            if spec.get("behavior") is None:
                outcome = behavior.without_behavior(state, current, proposed, min_replicas, max_replicas, now)
            else:
                outcome = behavior.with_behavior(state, spec["behavior"], current, proposed, min_replicas,
                                                 max_replicas, now)
            set_condition(hpa, "AbleToScale", "True", *outcome.able_to_scale, now)
            set_condition(hpa, "ScalingLimited", "True" if outcome.limited else "False", *outcome.limit, now)
            desired = outcome.replicas
            rescale = desired != current
        if rescale:
            scale["spec"]["replicas"] = desired
            try:
                await self.client.update(target, scale, namespace, subresource="scale")
            except errors.APIError as exc:
                await self.event(hpa, "Warning", "FailedRescale",
                                 f"New size: {desired}; reason: {reason}; error: {exc.message}")
                set_condition(hpa, "AbleToScale", "False", "FailedUpdateScale",
                              f"the HPA controller was unable to update the target scale: {exc.message}", now)
                self._set_status(hpa, current, hpa["status"]["desiredReplicas"], statuses, False, now)
                await self._write_status(hpa, original)
                raise Failed(f"failed to rescale {reference}: {exc.message}") from None
            set_condition(hpa, "AbleToScale", "True", "SucceededRescale",
                          f"the HPA controller was able to update the target scale to {desired}", now)
            await self.event(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
            behavior.record_scale(state, spec.get("behavior"), desired - current, now)
            log.info("%s: scaled %s from %d to %d (%s)", key, reference, current, desired, reason)
        else:
            desired = current
        self._set_status(hpa, current, desired, statuses, rescale, now)
        await self._write_status(hpa, original)

    def _tolerance(self, hpa: Obj) -> calc.Tolerance:
        """Each direction's `behavior` tolerance (HPAConfigurableTolerance), else the controller's."""
        rules = ((hpa.get("spec") or {}).get("behavior")) or {}

        def of(direction: str) -> float:
            given = (rules.get(direction) or {}).get("tolerance")
            try:
                return self.tolerance if given is None else float(quantities.parse(given))
            except ValueError:
                return self.tolerance

        return calc.Tolerance(down=of("scaleDown"), up=of("scaleUp"))

    async def _compute(self, hpa: Obj, scale: Obj, current: int, status_replicas: int, now: float
                       ) -> tuple[int | None, str, list[Obj], str]:
        """(the largest proposal or None, its metric, the statuses, the failure) as computeReplicasForMetrics."""
        specs = (hpa.get("spec") or {}).get("metrics") or [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                         "averageUtilization": 80}}}]
        namespace = hpa["metadata"].get("namespace") or "default"
        selector = (scale.get("status") or {}).get("selector") or ""
        if not selector:
            await self.event(hpa, "Warning", "SelectorRequired", "selector is required")
            set_condition(hpa, "ScalingActive", "False", "InvalidSelector",
                          "the HPA target's scale is missing a selector", now)
            return None, "", [], "selector is required"
        pods = (await self.client.list(PODS, namespace, label_selector=selector)).get("items") or []
        statuses: list[Obj] = [{"type": ""} for _ in specs]
        best: int | None = None
        best_name, first_error, invalid = "", "", 0
        for i, spec in enumerate(specs):
            try:
                found = await metrics.proposal(self.reader, spec, namespace, current, status_replicas, selector, pods,
                                               now, self._tolerance(hpa))
            except metrics.MetricError as exc:
                invalid += 1
                first_error = first_error or str(exc)
                await self.event(hpa, "Warning", exc.reason, str(exc))
                set_condition(hpa, "ScalingActive", "False", exc.reason,
                              f"the HPA was unable to compute the replica count: {exc}", now)
                continue
            statuses[i] = found.status
            if best is None or found.replicas > best:
                best, best_name = found.replicas, found.name
        if best is None or (invalid and best < current):
            return None, "", statuses, f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first_error}"
        set_condition(hpa, "ScalingActive", "True", "ValidMetricFound",
                      f"the HPA was able to successfully calculate a replica count from {best_name}", now)
        return best, best_name, statuses, ""
