"""The CronJob controller: a Job per schedule time (upstream's cronjob_controllerv2.go), keyed `ns/name`.

One reconcile: jobs in `status.active` that finished leave it (SawCompletedJob; a Complete one
sets lastSuccessfulTime), ones that are gone leave it too (MissingJob); then, unless the CronJob
is being deleted or suspended, the most recent schedule time not yet run (since lastScheduleTime or
creation, no further back than startingDeadlineSeconds — so, as upstream, a start missed by more
than the deadline is skipped without a job; more than 100 missed is the "too many missed start
times" warning) gets its Job `<cronjob>-<minutes since epoch>` unless it is too late
(MissSchedule) or concurrencyPolicy forbids it (Forbid: skip while one runs; Replace: delete the
running ones first). Finished Jobs past successfulJobsHistoryLimit / failedJobsHistoryLimit are
deleted, oldest first. The key is requeued for the next schedule time. The clock is injectable.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any

from client import errors
from client.informer import Event
from client.resources import CRONJOBS, JOBS
from client.rest import RestClient
from controllers import cron_schedule, events, job_conditions, stale_cache, timestamps
from controllers.reconciling import Result, Watch, by_name

log = logging.getLogger("haru.controllers.cronjob")
Obj = dict[str, Any]
COMPONENT = "cronjob-controller"
SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
OWNER_INDEX = "cronjob-controller-uid"
MAX_MISSED = 100
NEXT_SCHEDULE_DELTA = 0.1  # upstream wakes 100 ms after the schedule time


def _meta(obj: Obj | None) -> Obj:
    return (obj or {}).get("metadata") or {}


def controlling_cronjob(job: Obj) -> tuple[str, str] | None:
    for ref in _meta(job).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == "CronJob" and (ref.get("apiVersion") or "").startswith("batch/"):
            return ref.get("name") or "", ref.get("uid") or ""
    return None


def _owner_uid(job: Obj) -> list[str]:
    owner = controlling_cronjob(job)
    return [owner[1]] if owner else []


def job_name(cronjob: str, scheduled: datetime) -> str:
    """`<cronjob>-<minutes since the epoch>`: the same schedule time always names the same Job."""
    return f"{cronjob}-{int(scheduled.timestamp()) // 60}"


def most_recent(schedule: cron_schedule.Schedule, earliest: datetime, now: datetime) -> tuple[datetime | None, int]:
    """The latest firing in (earliest, now] and how many firings that range holds (capped just past 100)."""
    latest, missed = None, 0
    at = schedule.next_after(earliest)
    while at is not None and at <= now:
        latest, missed = at, missed + 1
        if missed > MAX_MISSED:
            # Too many to walk one by one: jump to the last one before now.
            last = _last_before(schedule, latest, now)
            return last, missed
        at = schedule.next_after(at)
    return latest, missed


def _last_before(schedule: cron_schedule.Schedule, after: datetime, now: datetime) -> datetime:
    """The latest firing in [after, now]: walked from a week before `now` (a schedule missed over
    a hundred times fires often), or from `after` when that week holds none."""
    for start in (max(after, now - timedelta(days=8)), after):
        found, at = None, schedule.next_after(start)
        while at is not None and at <= now:
            found, at = at, schedule.next_after(at)
        if found is not None:
            return found
    return after


class CronJobController:
    name = "cronjob"

    def __init__(self, client: RestClient, *, clock: Callable[[], float] = time.time) -> None:
        self.client, self.clock = client, clock
        self.cronjobs = Watch(CRONJOBS, by_name)
        self.jobs = Watch(JOBS, self._job_keys, indexers={OWNER_INDEX: _owner_uid})
        self.watches = [self.cronjobs, self.jobs]
        self._ctx: Any = None
        self.writes = stale_cache.LastWrites()

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _store(self, watch: Watch) -> Any:
        informer = self._ctx.informer(watch) if self._ctx is not None else None
        return informer.store if informer is not None else None

    def _job_keys(self, event: Event) -> list[Hashable]:
        owner = controlling_cronjob(event.obj)
        return [f"{_meta(event.obj).get('namespace')}/{owner[0]}"] if owner else []

    async def reconcile(self, key: Hashable) -> Result | None:
        assert isinstance(key, str)
        store = self._store(self.cronjobs)
        cronjob = store.get(key) if store is not None else None
        if cronjob is None:
            self.writes.forget(key)
            return None
        if not self.writes.caught_up(key, self._ctx, self.watches):
            return Result(requeue_after=stale_cache.REQUEUE)  # our last write is not in the cache yet
        jobs_store = self._store(self.jobs)
        jobs = list(jobs_store.by_index(OWNER_INDEX, _meta(cronjob).get("uid") or "")) if jobs_store is not None else []
        return await CronSync(self, cronjob, jobs).run()


class CronSync:
    """One pass over one CronJob and the Jobs it controls (upstream's syncCronJob)."""

    def __init__(self, controller: CronJobController, cronjob: Obj, jobs: list[Obj]) -> None:
        self.c, self.cronjob, self.jobs = controller, cronjob, jobs
        self.meta = _meta(cronjob)
        self.key = f"{self.meta.get('namespace')}/{self.meta.get('name')}"
        self.spec = cronjob.get("spec") or {}
        self.status: Obj = dict(cronjob.get("status") or {})
        self.now = datetime.fromtimestamp(controller.clock(), timezone.utc)

    def _event(self, kind: str, reason: str, message: str) -> Any:
        return events.record(self.c.client, COMPONENT, {**self.cronjob, "kind": "CronJob", "apiVersion": "batch/v1"},
                             kind, reason, message)

    async def run(self) -> Result | None:
        await self._track_active()
        requeue = None
        if not self.meta.get("deletionTimestamp"):
            requeue = await self._schedule()
        await self._write_status()
        await self._clean_history()
        return Result(requeue_after=requeue) if requeue is not None else None

    async def _track_active(self) -> None:
        by_uid = {_meta(j).get("uid"): j for j in self.jobs}
        active = list(self.status.get("active") or [])
        listed = {ref.get("uid") for ref in active}
        for job in self.jobs:
            ended = job_conditions.finished(job)
            uid = _meta(job).get("uid")
            if ended is None:
                if uid not in listed and not _meta(job).get("deletionTimestamp"):
                    await self._event("Warning", "UnexpectedJob",
                                      f"Saw a job that the controller did not create or forgot: {_meta(job).get('name')}")
                continue
            if uid in listed:
                await self._event("Normal", "SawCompletedJob",
                                  f"Saw completed job: {_meta(job).get('name')}, condition: {ended.get('type')}")
                active = [ref for ref in active if ref.get("uid") != uid]
            if ended.get("type") == "Complete":
                done = (job.get("status") or {}).get("completionTime")
                last = timestamps.parse(self.status.get("lastSuccessfulTime"))
                if done and (last is None or (timestamps.parse(done) or 0) > last):
                    self.status["lastSuccessfulTime"] = done
        kept = []
        for ref in active:
            if ref.get("uid") in by_uid:
                kept.append(ref)
            elif not await self._exists(ref):
                await self._event("Normal", "MissingJob", f"Active job went missing: {ref.get('name')}")
            else:
                kept.append(ref)  # our cache lags: keep it until the Job shows up or is really gone
        self.status["active"] = kept

    async def _exists(self, ref: Obj) -> bool:
        try:
            job = await self.c.client.get(JOBS, ref.get("name") or "", self.meta.get("namespace"))
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return False
            raise
        return _meta(job).get("uid") == ref.get("uid")

    async def _schedule(self) -> float | None:
        zone_name = self.spec.get("timeZone")
        try:
            schedule = cron_schedule.parse(self.spec.get("schedule") or "", zone_name)
        except cron_schedule.ScheduleError as exc:
            if zone_name and "location" in str(exc):
                await self._event("Warning", "UnknownTimeZone", f'invalid timeZone: "{zone_name}": {exc}')
            else:
                await self._event("Warning", "UnparseableSchedule",
                                  f'unparseable schedule: "{self.spec.get("schedule")}" : {exc}')
            return None
        if self.spec.get("suspend"):
            return None
        created = timestamps.parse(self.meta.get("creationTimestamp")) or self.now.timestamp()
        earliest = datetime.fromtimestamp(timestamps.parse(self.status.get("lastScheduleTime")) or created, timezone.utc)
        deadline = self.spec.get("startingDeadlineSeconds")
        if deadline is not None:
            floor = self.now - timedelta(seconds=int(deadline))
            earliest = max(earliest, floor)
        scheduled, missed = most_recent(schedule, earliest, self.now)
        if missed > MAX_MISSED:
            await self._event("Warning", "TooManyMissedTimes",
                              "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
        if scheduled is None:
            return self._until_next(schedule)
        if deadline is not None and scheduled.timestamp() + int(deadline) < self.now.timestamp():
            when = format_datetime(scheduled.astimezone(schedule.zone))
            await self._event("Warning", "MissSchedule", f"Missed scheduled time to start a job: {when}")
            return self._until_next(schedule)
        name = job_name(self.meta.get("name") or "", scheduled)
        if any(ref.get("name") == name for ref in self.status.get("active") or []):
            return self._until_next(schedule)
        policy = self.spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and self.status.get("active"):
            await self._event("Normal", "JobAlreadyActive",
                              "Not starting job because prior execution is running and concurrency policy is Forbid")
            return self._until_next(schedule)
        if policy == "Replace":
            for ref in list(self.status.get("active") or []):
                await self._delete_job(ref.get("name") or "", ref.get("uid"))
                self.status["active"] = [r for r in self.status["active"] if r.get("uid") != ref.get("uid")]
        job = await self._create(name, scheduled, schedule)
        if job is not None:
            ref = {"kind": "Job", "namespace": _meta(job).get("namespace"), "name": _meta(job).get("name"),
                   "uid": _meta(job).get("uid"), "apiVersion": "batch/v1",
                   "resourceVersion": _meta(job).get("resourceVersion")}
            if not any(r.get("uid") == ref["uid"] for r in self.status.get("active") or []):
                self.status["active"] = list(self.status.get("active") or []) + [ref]
        self.status["lastScheduleTime"] = timestamps.format(scheduled.timestamp())
        return self._until_next(schedule)

    def _until_next(self, schedule: cron_schedule.Schedule) -> float | None:
        at = schedule.next_after(self.now)
        return None if at is None else max(0.0, at.timestamp() - self.now.timestamp()) + NEXT_SCHEDULE_DELTA

    async def _create(self, name: str, scheduled: datetime, schedule: cron_schedule.Schedule) -> Obj | None:
        template = self.spec.get("jobTemplate") or {}
        tmeta = template.get("metadata") or {}
        annotations = dict(tmeta.get("annotations") or {})
        annotations[SCHEDULED_TIMESTAMP] = _rfc3339(scheduled.astimezone(schedule.zone))
        body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
            "name": name, "namespace": self.meta.get("namespace"), "labels": dict(tmeta.get("labels") or {}),
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": self.meta.get("name"),
                                 "uid": self.meta.get("uid"), "controller": True, "blockOwnerDeletion": True}]},
            "spec": template.get("spec") or {}}
        try:
            job = self.c.writes.wrote(self.key, JOBS, await self.c.client.create(JOBS, body, self.meta.get("namespace")))
        except errors.APIError as exc:
            if errors.is_already_exists(exc):
                return await self._existing(name)
            await self._event("Warning", "FailedCreate", f"Error creating job: {exc}")
            raise
        await self._event("Normal", "SuccessfulCreate", f"Created job {name}")
        log.info("cronjob %s/%s: created job %s", self.meta.get("namespace"), self.meta.get("name"), name)
        return job

    async def _existing(self, name: str) -> Obj | None:
        """A Job of that name exists: ours (created before a crash) is tracked, another one is not."""
        job = await self.c.client.get(JOBS, name, self.meta.get("namespace"))
        owner = controlling_cronjob(job)
        if owner is None or owner[1] != self.meta.get("uid") or job_conditions.finished(job) is not None:
            return None
        return job

    async def _delete_job(self, name: str, uid: str | None) -> bool:
        try:
            answer = await self.c.client.delete(JOBS, name, self.meta.get("namespace"), propagation_policy="Background",
                                                uid=uid)
            self.c.writes.wrote(self.key, JOBS, answer)
        except errors.APIError as exc:
            if errors.is_not_found(exc) or errors.is_conflict(exc):
                return False
            await self._event("Warning", "FailedDelete", f"Deleted job: {exc}")
            raise
        await self._event("Normal", "SuccessfulDelete", f"Deleted job {name}")
        return True

    async def _write_status(self) -> None:
        if not self.status.get("active"):
            self.status.pop("active", None)
        if self.status == (self.cronjob.get("status") or {}):
            return
        self.cronjob = await self.c.client.update(CRONJOBS, {**self.cronjob, "status": self.status}, subresource="status")
        self.c.writes.wrote(self.key, CRONJOBS, self.cronjob)

    async def _clean_history(self) -> None:
        limits = (("Complete", self.spec.get("successfulJobsHistoryLimit")), ("Failed", self.spec.get("failedJobsHistoryLimit")))
        for kind, limit in limits:
            if limit is None:
                continue
            ended = [j for j in self.jobs if (job_conditions.finished(j) or {}).get("type") == kind
                     and not _meta(j).get("deletionTimestamp")]
            ended.sort(key=_started)
            for job in ended[:max(0, len(ended) - int(limit))]:
                await self._delete_job(_meta(job).get("name") or "", _meta(job).get("uid"))


def _started(job: Obj) -> tuple[float, str]:
    status = job.get("status") or {}
    start = timestamps.parse(status.get("startTime")) or timestamps.parse(_meta(job).get("creationTimestamp")) or 0.0
    return start, _meta(job).get("name") or ""


def _rfc3339(when: datetime) -> str:
    text = when.replace(microsecond=0).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text
