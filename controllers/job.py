"""The Job controller: pods for a Job until it completes or fails, counted through the
`batch.kubernetes.io/job-tracking` finalizer (upstream's pkg/controller/job, keyed `ns/name`).

One reconcile: finished pods that still carry the finalizer go into
`status.uncountedTerminatedPods` (written first), lose the finalizer, and only then move into
`succeeded`/`failed` (and `completedIndexes`/`failedIndexes`), so a crash never counts a pod twice
or not at all. Then the Job's outcome: podFailurePolicy FailJob, backoffLimit (and the restart
count of OnFailure pods), maxFailedIndexes, activeDeadlineSeconds → FailureTarget, then Failed once
no pod runs; completions or successPolicy → SuccessCriteriaMet, then Complete. Otherwise suspend /
resume, and pods created or deleted towards parallelism, replacements after an exponential
backoff. The pods are claimed first (`controller_refs`): orphans the selector matches are adopted
(with the tracking finalizer), owned pods that stopped matching are released and lose it. Writes
wait until the caches show our earlier writes (expectations, and a Job cache older
than our last status write is skipped and requeued, as KEP-5647 does).
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Hashable
from typing import Any

from client import cache, errors
from client.informer import Event
from client.resources import JOBS, PODS
from client.rest import RestClient
from controllers import controller_refs, events, job_backoff, job_conditions as conds, job_failure_policy, job_indexes, job_pods
from controllers import features as feature_gates, job_success_policy, job_workload, timestamps
from controllers.reconciling import Result, Watch, by_name

log = logging.getLogger("haru.controllers.job")
Obj = dict[str, Any]
COMPONENT = "job-controller"
OWNER_INDEX = "job-controller-uid"
OWNER_NAME_INDEX = "job-controller-name"
NAMESPACE_INDEX = "namespace"
MAX_PODS_PER_SYNC = 500  # upstream's MaxPodCreateDeletePerSync
MAX_UNCOUNTED = 500  # upstream's MaxUncountedPods


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def controlling_job(pod: Obj) -> tuple[str, str] | None:
    """(name, uid) of the Job that controls the pod."""
    for ref in _meta(pod).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == "Job" and (ref.get("apiVersion") or "").startswith("batch/"):
            return ref.get("name") or "", ref.get("uid") or ""
    return None


def _owner_uid(pod: Obj) -> list[str]:
    owner = controlling_job(pod)
    return [owner[1]] if owner else []


def _owner_key(pod: Obj) -> list[str]:
    owner = controlling_job(pod)
    return [f"{_meta(pod).get('namespace')}/{owner[0]}"] if owner else []


def _rv(obj: Obj) -> int | None:
    value = _meta(obj).get("resourceVersion") or ""
    return int(value) if value.isdigit() else None


def _finish_time(pod: Obj, now: float) -> float:
    status = pod.get("status") or {}
    times = [timestamps.parse(((c.get("state") or {}).get("terminated") or {}).get("finishedAt"))
             for c in status.get("containerStatuses") or []]
    known = [t for t in times if t is not None]
    return max(known) if known else now


class JobController:
    name = "job"

    def __init__(self, client: RestClient, *, backoff_base: float = job_backoff.BASE,
                 backoff_cap: float = job_backoff.CAP, clock: Callable[[], float] = time.time,
                 features: feature_gates.Features | None = None) -> None:
        self.client = client
        self.backoff_base, self.backoff_cap, self.clock = backoff_base, backoff_cap, clock
        self.jobs = Watch(JOBS, by_name, indexers={NAMESPACE_INDEX: cache.by_namespace})
        self.pods = Watch(PODS, self._pod_keys, indexers={OWNER_INDEX: _owner_uid, OWNER_NAME_INDEX: _owner_key,
                                                         NAMESPACE_INDEX: cache.by_namespace})
        self.watches = [self.jobs, self.pods]
        # With WorkloadWithJob, gang-shaped Indexed Jobs get a Workload and a PodGroup first.
        gates = feature_gates.defaults() if features is None else features
        self.groups = job_workload.Groups(client) if feature_gates.job_workloads(gates) else None
        if self.groups is not None:
            self.watches += self.groups.watches
        self._ctx: Any = None
        self._backoff: dict[str, job_backoff.Record] = {}
        # Per Job uid, pod name → what we did to it that the pod cache must show before we act again.
        self._expected: dict[str, dict[str, str]] = {}
        self._written: dict[str, int] = {}  # Job key → resourceVersion of our last status write
        # Pods deleted because their Job was suspended: their end is not a failure.
        self.suspended_pods: set[str] = set()

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx
        if self.groups is not None:
            self.groups.prepare(ctx)

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    def _pod_keys(self, event: Event) -> list[Hashable]:
        keys: list[Hashable] = []
        for obj in (event.obj, event.old):
            owner = controlling_job(obj) if obj else None
            if owner is not None:
                key = f"{_meta(obj).get('namespace')}/{owner[0]}"
                if key not in keys:
                    keys.append(key)
        if not keys and event.type != "DELETED" and event.obj is not None:
            # An orphan: the Jobs whose selector takes it may adopt it.
            keys = controller_refs.owner_keys(event.obj, None, False, "Job", self._store(self.jobs), NAMESPACE_INDEX)
        return keys

    # -- expectations ------------------------------------------------------------------------

    def _expect(self, job_uid: str, pod_name: str, what: str) -> None:
        self._expected.setdefault(job_uid, {})[pod_name] = what

    def _satisfied(self, job_uid: str, pods_by_name: dict[str, Obj]) -> bool:
        pending = self._expected.get(job_uid)
        if not pending:
            return True
        for name, what in list(pending.items()):
            pod = pods_by_name.get(name)
            seen = (pod is not None if what == "create"
                    else pod is None or bool(_meta(pod).get("deletionTimestamp")) if what == "delete"
                    else pod is None or not job_pods.has_finalizer(pod))
            if seen:
                del pending[name]
        return not pending

    # -- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> Result | None:
        assert isinstance(key, str)
        store = self._store(self.jobs)
        job = store.get(key) if store is not None else None
        pod_store = self._store(self.pods)
        uid = _meta(job).get("uid") or ""
        named = pod_store.by_index(OWNER_NAME_INDEX, key) if pod_store is not None else []
        # Pods of a Job that is gone (or of an earlier Job of that name) would keep our finalizer forever.
        orphans = [p for p in named if job_pods.has_finalizer(p) and (controlling_job(p) or ("", ""))[1] != uid]
        if orphans:
            await Sync.release_orphans(self, orphans)
        if job is None:
            self._written.pop(key, None)
            if self.groups is not None:
                self.groups.forget(key)
            return None
        if self.groups is not None and conds.finished(job) is not None:
            self.groups.forget(key)
        if conds.finished(job) is not None:
            self._expected.pop(uid, None)
        written, cached = self._written.get(key), _rv(job)
        if written is not None and cached is not None and cached < written:
            return Result(requeue_after=0.05)  # our own last write is not in the cache yet
        pods = await self._claim_pods(job, pod_store)
        if not self._satisfied(uid, {_meta(p).get("name") or "": p for p in pods}):
            return Result(requeue_after=1.0)  # the pod events will bring us back sooner
        return await Sync(self, job, pods).run()

    async def _claim_pods(self, job: Obj, pod_store: Any) -> list[Obj]:
        """Our pods after adopting matching orphans and releasing owned pods that stopped matching
        (upstream's getPodsForJob with its PodControllerRefManager)."""
        namespace = _meta(job).get("namespace") or ""
        candidates = list(pod_store.by_index(NAMESPACE_INDEX, namespace)) if pod_store is not None else []
        claimed = controller_refs.claim(job, candidates, (job.get("spec") or {}).get("selector"))
        owned = list(claimed.owned)
        if claimed.adopt and conds.finished(job) is None and await controller_refs.can_adopt(self.client, JOBS, job):
            for pod in claimed.adopt:
                body = controller_refs.adopt_patch(job, "batch/v1", "Job", pod)
                body["metadata"]["finalizers"] = [job_pods.TRACKING_FINALIZER]  # merged into the pod's list
                if (adopted := await controller_refs.patch(self.client, PODS, pod, body)) is not None:
                    owned.append(adopted)
        for pod in claimed.release:
            released = await controller_refs.patch(self.client, PODS, pod, controller_refs.release_patch(job, pod))
            if released is not None:
                await _remove_finalizer(self.client, released)  # no Job counts it any more
        return owned

    async def write_status(self, job: Obj, status: Obj) -> Obj:
        body = {**job, "status": status}
        updated = await self.client.update(JOBS, body, subresource="status")
        key = f"{_meta(job).get('namespace')}/{_meta(job).get('name')}"
        if (rv := _rv(updated)) is not None:
            self._written[key] = rv
        return updated

    def backoff(self, job_uid: str) -> job_backoff.Record:
        return self._backoff.setdefault(job_uid, job_backoff.Record())


class Sync:
    """One pass over one Job and its pods (upstream's syncJob with its jobCtx)."""

    def __init__(self, controller: JobController, job: Obj, pods: list[Obj]) -> None:
        self.c, self.job, self.pods = controller, job, pods
        self.meta = _meta(job)
        self.uid = self.meta.get("uid") or ""
        self.spec = job.get("spec") or {}
        self.status: Obj = copy.deepcopy(job.get("status") or {})
        self.now = controller.clock()
        self.now_text = timestamps.format(self.now)
        self.indexed = job_pods.is_indexed(job)
        self.completions: int | None = self.spec.get("completions")
        self.parallelism = int(self.spec.get("parallelism") if self.spec.get("parallelism") is not None else 1)
        self.only_failed = self.spec.get("podReplacementPolicy") == "Failed"
        self.per_index = self.spec.get("backoffLimitPerIndex") if self.indexed else None
        self.requeue: float | None = None
        self.pod_group: str | None = None  # the PodGroup new pods join (job_workload.py)

    # -- helpers -----------------------------------------------------------------------------

    def _event(self, kind: str, reason: str, message: str) -> Any:
        return events.record(self.c.client, COMPONENT, {**self.job, "kind": "Job", "apiVersion": "batch/v1"},
                             kind, reason, message)

    def _index(self, pod: Obj) -> int | None:
        index = job_indexes.index_of(pod)
        if index is None or self.completions is None or index >= self.completions:
            return None
        return index

    def _later(self, seconds: float) -> None:
        self.requeue = seconds if self.requeue is None else min(self.requeue, seconds)

    # -- the pass ----------------------------------------------------------------------------

    @staticmethod
    async def release_orphans(controller: JobController, pods: list[Obj]) -> None:
        for pod in pods:
            await _remove_finalizer(controller.client, pod)

    async def run(self) -> Result | None:
        if conds.finished(self.job) is not None or self.meta.get("deletionTimestamp"):
            # Ended or going away: nothing to count any more, but no pod may keep our finalizer.
            await self._remove_finalizers([p for p in self.pods if job_pods.has_finalizer(p)])
            self.c._backoff.pop(self.uid, None)
            return None
        uncounted = self.status.get("uncountedTerminatedPods") or {}
        self.unc_succeeded: list[str] = list(uncounted.get("succeeded") or [])
        self.unc_failed: list[str] = list(uncounted.get("failed") or [])
        self.completed = job_indexes.parse(self.status.get("completedIndexes"), self.completions) if self.indexed else set()
        self.failed_indexes = (job_indexes.parse(self.status.get("failedIndexes"), self.completions)
                               if self.per_index is not None else set())
        failure = self._target("FailureTarget")
        success = self._target("SuccessCriteriaMet")

        release, failure = self._collect_finished(failure)
        active = [p for p in self.pods if job_pods.is_active(p)]
        terminating = [p for p in self.pods if job_pods.is_terminating(p)]
        suspended = bool(self.spec.get("suspend"))

        if failure is None and success is None:
            failure = self._failure(active, suspended)
        if failure is None and success is None:
            success = self._success(active)
        if failure is not None:
            conds.set_condition(self.status, "FailureTarget", "True", failure[0], failure[1], self.now_text)
        elif success is not None:
            conds.set_condition(self.status, "SuccessCriteriaMet", "True", success[0], success[1], self.now_text)

        doomed: list[Obj] = []
        if failure is not None or success is not None:
            doomed = active
        else:
            doomed = await self._manage(active, terminating, suspended)
        self._fill_counts(active, terminating, [])

        # 1) record what we are about to count, 2) let the pods go, 3) count them.
        self._tidy()
        if self.status != (self.job.get("status") or {}):
            self.job = await self.c.write_status(self.job, self.status)
            self.status = copy.deepcopy(self.job.get("status") or {})
        self.c._backoff[self.uid] = self.record
        await self._remove_finalizers(release)
        suspending = failure is None and success is None and bool(self.spec.get("suspend"))
        deleted = await self._delete(doomed, not_failures=suspending)
        self._fill_counts(active, terminating, deleted)
        self._flush(release)
        ended = self._finish(failure, success)
        self._tidy()
        if self.status != (self.job.get("status") or {}):
            self.job = await self.c.write_status(self.job, self.status)
        if ended:
            await self._announce_end()
        return Result(requeue_after=self.requeue) if self.requeue is not None else None

    def _target(self, kind: str) -> tuple[str, str] | None:
        condition = conds.find(self.job, kind)
        if condition is not None and condition.get("status") == "True":
            return condition.get("reason") or "", condition.get("message") or ""
        return None

    def _collect_finished(self, failure: tuple[str, str] | None) -> tuple[list[Obj], tuple[str, str] | None]:
        """Finished pods with our finalizer: into uncounted (or just released); FailJob/FailIndex noted."""
        release: list[Obj] = []
        finished: list[tuple[bool, float]] = []  # newly seen ends, for the backoff record
        known = set(self.unc_succeeded) | set(self.unc_failed)
        policy = self.spec.get("podFailurePolicy")
        suspended = bool(self.spec.get("suspend"))
        for pod in self.pods:
            if not job_pods.has_finalizer(pod):
                continue
            uid = _meta(pod).get("uid") or ""
            if uid in known:
                release.append(pod)
                continue
            if len(self.unc_succeeded) + len(self.unc_failed) >= MAX_UNCOUNTED:
                self._later(0.0)  # the rest next time, keeping the status small
                break
            if job_pods.phase(pod) == "Succeeded":
                release.append(pod)
                if self.indexed:
                    # The index alone keeps a success from counting twice (no uid to track), as upstream.
                    index = self._index(pod)
                    if index is not None and index not in self.completed:
                        self.completed.add(index)
                        finished.append((True, _finish_time(pod, self.now)))
                    continue
                self.unc_succeeded.append(uid)
                finished.append((True, _finish_time(pod, self.now)))
            elif uid in self.c.suspended_pods and (job_pods.is_terminal(pod) or _meta(pod).get("deletionTimestamp")):
                release.append(pod)  # removed by the suspension, not a failure
                self.c.suspended_pods.discard(uid)
            elif (job_pods.counts_as_failed(pod, self.only_failed) and not (
                    suspended and job_pods.phase(pod) != "Failed")) or (
                    failure is not None and _meta(pod).get("deletionTimestamp")):
                # (Once the Job is failing, every pod being stopped counts as failed.)
                match = job_failure_policy.match(policy, pod) if job_pods.phase(pod) == "Failed" else None
                release.append(pod)
                if match is not None and not match.counts:
                    continue  # Ignore: not a failure at all
                if match is not None and match.action == "FailJob" and failure is None:
                    failure = (conds.POD_FAILURE_POLICY, match.message)
                if self.per_index is not None:
                    index = self._index(pod)
                    if index is not None and index not in self.completed:
                        counted, _ = job_pods.index_failures(pod)
                        if (match is not None and match.action == "FailIndex") or counted + 1 > self.per_index:
                            self.failed_indexes.add(index)
                self.unc_failed.append(uid)
                finished.append((False, _finish_time(pod, self.now)))
        self.status["uncountedTerminatedPods"] = {k: v for k, v in (("succeeded", self.unc_succeeded),
                                                                    ("failed", self.unc_failed)) if v}
        if self.per_index is not None:
            self.status["failedIndexes"] = job_indexes.format(self.failed_indexes)
        if self.indexed:
            self.status["completedIndexes"] = job_indexes.format(self.completed)
            self.status["succeeded"] = len(self.completed)
        # The replacement decision below must already see these ends (upstream's newBackoffRecord);
        # the record is kept once the status naming them is written.
        self.record = copy.copy(self.c.backoff(self.uid))
        self.record.update(finished)
        return release, failure

    def _succeeded_indexes(self) -> set[int]:
        pending = set(self.unc_succeeded)
        return self.completed | {i for p in self.pods if (_meta(p).get("uid") in pending) and (i := self._index(p)) is not None}

    def _failure(self, active: list[Obj], suspended: bool) -> tuple[str, str] | None:
        failed = int(self.status.get("failed") or 0) + len(self.unc_failed)
        if self.per_index is None:
            limit = int(self.spec.get("backoffLimit") if self.spec.get("backoffLimit") is not None else 6)
            if failed > limit or self._past_limit_on_failure(active, limit):
                return conds.BACKOFF_LIMIT
        else:
            most = self.spec.get("maxFailedIndexes")
            if most is not None and len(self.failed_indexes) > most:
                return conds.MAX_FAILED_INDEXES
            if self.completions is not None and self.failed_indexes and \
                    len(self._succeeded_indexes() | self.failed_indexes) >= self.completions:
                return conds.FAILED_INDEXES
        deadline = self.spec.get("activeDeadlineSeconds")
        started = timestamps.parse(self.status.get("startTime"))
        if deadline is not None and started is not None and not suspended:
            left = started + int(deadline) - self.now
            if left <= 0:
                return conds.DEADLINE
            self._later(left)
        return None

    def _past_limit_on_failure(self, active: list[Obj], limit: int) -> bool:
        template_spec = (self.spec.get("template") or {}).get("spec") or {}
        if template_spec.get("restartPolicy") != "OnFailure":
            return False
        total = sum(job_pods.restarts(p) for p in active if job_pods.phase(p) in ("Running", "Pending", ""))
        return total > 0 if limit == 0 else total >= limit

    def _success(self, active: list[Obj]) -> tuple[str, str] | None:
        if self.indexed and self.completions is not None:
            done = self._succeeded_indexes()
            message = job_success_policy.matched(self.spec.get("successPolicy"), self.completions, done)
            if message is not None:
                return job_success_policy.REASON, message
            if len(done) >= self.completions and not self.failed_indexes:
                return conds.COMPLETIONS_REACHED
            return None
        succeeded = int(self.status.get("succeeded") or 0) + len(self.unc_succeeded)
        if self.completions is not None:
            return conds.COMPLETIONS_REACHED if succeeded >= self.completions else None
        # No completions (a work queue): done once one pod succeeded and none still works.
        return conds.COMPLETIONS_REACHED if succeeded > 0 and not active else None

    # -- pods --------------------------------------------------------------------------------

    async def _manage(self, active: list[Obj], terminating: list[Obj], suspended: bool) -> list[Obj]:
        """Suspend/resume and create pods; returns the active pods to delete."""
        if suspended:
            if not conds.is_true(self.job, "Suspended"):
                conds.set_condition(self.status, "Suspended", "True", *conds.SUSPENDED, self.now_text)
                await self._event("Normal", "Suspended", "Job suspended")
            return active
        if conds.is_true(self.job, "Suspended"):
            conds.set_condition(self.status, "Suspended", "False", *conds.RESUMED, self.now_text)
            await self._event("Normal", "Resumed", "Job resumed")
            self.status["startTime"] = self.now_text  # the deadline counts from the resume
        self.status.setdefault("startTime", self.now_text)
        if self.indexed:
            return await self._manage_indexed(active, terminating)
        succeeded = int(self.status.get("succeeded") or 0) + len(self.unc_succeeded)
        if self.completions is not None:
            want = min(self.parallelism, max(0, self.completions - succeeded))
        else:
            want = len(active) if succeeded > 0 else self.parallelism
        if len(active) > want:
            return sorted(active, key=job_pods.deletion_rank)[:len(active) - want]
        missing = want - len(active) - (len(terminating) if self.only_failed else 0)
        if missing > 0 and self._wait_backoff():
            await self._create([None] * missing)
        return []

    async def _manage_indexed(self, active: list[Obj], terminating: list[Obj]) -> list[Obj]:
        assert self.completions is not None
        done = self._succeeded_indexes() | self.failed_indexes
        doomed: list[Obj] = []
        running: set[int] = set()
        for pod in sorted(active, key=job_pods.deletion_rank, reverse=True):
            index = self._index(pod)
            if index is None or index in done or index in running:
                doomed.append(pod)  # out of range, already finished, or a second pod for an index
            else:
                running.add(index)
        busy = running | ({i for p in terminating if (i := self._index(p)) is not None} if self.only_failed else set())
        want = min(self.parallelism, self.completions - len(done))
        missing = want - len(running) - (len(terminating) if self.only_failed else 0)
        candidates = [i for i in range(self.completions) if i not in done and i not in busy][:max(0, missing)]
        if candidates and self._wait_backoff():
            if self.c.groups is not None and job_workload.candidate(self.job):
                # Workload → PodGroup → Pods, the order KEP-5547 asks for.
                self.pod_group = await self.c.groups.ensure(self.job, self.pods, self._event)
            await self._create(candidates)
        return doomed

    def _wait_backoff(self) -> bool:
        """False (and a requeue) while the replacement must still wait after recent failures."""
        left = self.record.remaining(self.now, self.c.backoff_base, self.c.backoff_cap)
        if left > 0:
            self._later(left)
            return False
        return True

    def _index_failures(self, index: int) -> tuple[int, int]:
        """The failure counts the next pod of `index` carries: the last failed pod's, plus that one."""
        best = (0, 0)
        policy = self.spec.get("podFailurePolicy")
        for pod in self.pods:
            if self._index(pod) != index or job_pods.phase(pod) != "Failed":
                continue
            counted, ignored = job_pods.index_failures(pod)
            match = job_failure_policy.match(policy, pod)
            candidate = (counted, ignored + 1) if match is not None and not match.counts else (counted + 1, ignored)
            best = max(best, candidate)
        return best

    async def _create(self, indexes: list[int | None]) -> None:
        for index in indexes[:MAX_PODS_PER_SYNC]:
            failures = self._index_failures(index) if index is not None and self.per_index is not None else (0, 0)
            body = job_pods.new_pod(self.job, index, failures)
            if self.pod_group is not None:
                body["spec"]["schedulingGroup"] = {"podGroupName": self.pod_group}
            try:
                pod = await self.c.client.create(PODS, body, self.meta.get("namespace"))
            except errors.APIError as exc:
                await self._event("Warning", "FailedCreate", f"Error creating: {exc}")
                raise
            self.c._expect(self.uid, _meta(pod).get("name") or "", "create")
            await self._event("Normal", "SuccessfulCreate", f"Created pod: {_meta(pod).get('name')}")

    async def _delete(self, pods: list[Obj], not_failures: bool) -> list[Obj]:
        """Delete active pods (keeping the finalizer); returns the ones that are now being deleted."""
        deleted: list[Obj] = []
        for pod in pods[:MAX_PODS_PER_SYNC]:
            name = _meta(pod).get("name") or ""
            if not_failures:
                self.c.suspended_pods.add(_meta(pod).get("uid") or "")
            try:
                await self.c.client.delete(PODS, name, self.meta.get("namespace"), uid=_meta(pod).get("uid"))
            except errors.APIError as exc:
                if errors.is_not_found(exc):
                    deleted.append(pod)
                    continue
                if errors.is_conflict(exc):
                    continue
                await self._event("Warning", "FailedDelete", f"Error deleting: {exc}")
                raise
            deleted.append(pod)
            self.c._expect(self.uid, name, "delete")
            await self._event("Normal", "SuccessfulDelete", f"Deleted pod: {name}")
        return deleted

    async def _remove_finalizers(self, pods: list[Obj]) -> None:
        for pod in pods:
            if await _remove_finalizer(self.c.client, pod):
                self.c._expect(self.uid, _meta(pod).get("name") or "", "unfinalize")

    # -- status ------------------------------------------------------------------------------

    def _fill_counts(self, active: list[Obj], terminating: list[Obj], deleted: list[Obj]) -> None:
        """active/ready/terminating; pods we just deleted count as terminating, as upstream counts them."""
        gone = {_meta(p).get("uid") for p in deleted}
        still = [p for p in active if _meta(p).get("uid") not in gone]
        self.status["active"] = len(still)
        self.status["ready"] = sum(1 for p in still if job_pods.is_ready(p))
        self.status["terminating"] = len(terminating) + len(active) - len(still)
        self.status.setdefault("succeeded", 0)
        self.status.setdefault("failed", 0)
        if self.indexed:
            self.status.setdefault("completedIndexes", "")

    def _tidy(self) -> None:
        # active, succeeded and failed are omitempty in upstream's JobStatus; ready and terminating are not.
        for name in ("active", "succeeded", "failed"):
            if not self.status.get(name):
                self.status.pop(name, None)

    def _flush(self, released: list[Obj]) -> None:
        """Move uncounted pods whose finalizer is gone into the counters."""
        gone = {_meta(p).get("uid") for p in released}
        present = {_meta(p).get("uid"): p for p in self.pods}
        free = lambda uid: uid in gone or uid not in present or not job_pods.has_finalizer(present[uid])  # noqa: E731
        moved_ok = [u for u in self.unc_succeeded if free(u)]
        moved_failed = [u for u in self.unc_failed if free(u)]
        if self.indexed:
            # Successes count by index (uids of Indexed pods appear here only from an older writer).
            self.completed |= {i for u in moved_ok if u in present and (i := self._index(present[u])) is not None}
            self.status["completedIndexes"] = job_indexes.format(self.completed)
            self.status["succeeded"] = len(self.completed)
        else:
            self.status["succeeded"] = int(self.status.get("succeeded") or 0) + len(moved_ok)
        self.status["failed"] = int(self.status.get("failed") or 0) + len(moved_failed)
        self.unc_succeeded = [u for u in self.unc_succeeded if u not in moved_ok]
        self.unc_failed = [u for u in self.unc_failed if u not in moved_failed]
        self.status["uncountedTerminatedPods"] = {k: v for k, v in (("succeeded", self.unc_succeeded),
                                                                    ("failed", self.unc_failed)) if v}

    def _finish(self, failure: tuple[str, str] | None, success: tuple[str, str] | None) -> bool:
        """Failed or Complete once every pod has stopped and been counted; True when it ended now."""
        if failure is None and success is None:
            return False
        still = [p for p in self.pods if not job_pods.is_terminal(p)]
        if still or self.unc_succeeded or self.unc_failed:
            return False  # the terminal condition waits for the pods we are stopping
        if failure is not None:
            conds.set_condition(self.status, "Failed", "True", failure[0], failure[1], self.now_text)
        elif success is not None:
            conds.set_condition(self.status, "Complete", "True", success[0], success[1], self.now_text)
            self.status["completionTime"] = self.now_text
        return True

    async def _announce_end(self) -> None:
        ended = conds.finished(self.job)
        if ended is None:
            return
        if ended.get("type") == "Complete":
            await self._event("Normal", "Completed", "Job completed")
        else:
            await self._event("Warning", ended.get("reason") or "", ended.get("message") or "")
        log.info("job %s/%s %s: %s", self.meta.get("namespace"), self.meta.get("name"), ended.get("type"),
                 ended.get("message"))


async def _remove_finalizer(client: RestClient, pod: Obj) -> bool:
    """Drop the tracking finalizer (a JSON patch that tests it is still where we saw it)."""
    finalizers = _meta(pod).get("finalizers") or []
    if job_pods.TRACKING_FINALIZER not in finalizers:
        return False
    at = finalizers.index(job_pods.TRACKING_FINALIZER)
    patch = [{"op": "test", "path": f"/metadata/finalizers/{at}", "value": job_pods.TRACKING_FINALIZER},
             {"op": "remove", "path": f"/metadata/finalizers/{at}"}]
    try:
        await client.patch(PODS, _meta(pod).get("name") or "", patch, _meta(pod).get("namespace"), patch_type="json")
    except errors.APIError as exc:
        if not errors.is_not_found(exc):
            raise
    return True
