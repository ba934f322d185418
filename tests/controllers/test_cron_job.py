"""The CronJob controller against a real API server (in-process) on a fake clock the test moves;
each step enqueues the CronJob as a schedule wake-up would.

A schedule time makes the Job `<cronjob>-<minutes since epoch>` with the scheduled-timestamp
annotation (in the CronJob's time zone), a controller reference, status.active and
lastScheduleTime; a finished Job leaves active (SawCompletedJob) and sets lastSuccessfulTime;
Forbid skips while one runs, Replace deletes it; a start later than startingDeadlineSeconds is
skipped; suspend creates nothing; history limits delete the oldest finished Jobs; a CronJob
far behind warns about too many missed start times; `kubectl create job --from=cronjob/x` works.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from client import errors
from client.resources import CRONJOBS, EVENTS, JOBS
from controllers import cron_job, timestamps
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually


class FakeClock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


CLOCK = FakeClock()
CONTROLLERS = ("cronjob",)
SETTINGS = {"cronjob": {"clock": CLOCK}}
pytestmark = pytest.mark.asyncio(loop_scope="module")
NS = "default"


def _cronjob(name: str, schedule: str = "*/1 * * * *", **spec: Any) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": name}}, "spec": {"template": {"spec": {
        "containers": [{"name": "main", "image": "busybox", "command": ["true"]}], "restartPolicy": "OnFailure"}}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "jobTemplate": template, **spec}}


def _next_minute(after: float) -> float:
    return (int(after) // 60 + 1) * 60


async def _create(cluster: Cluster, body: dict[str, Any]) -> float:
    """Create a CronJob with the clock just before its creation (nothing due yet); its first minute."""
    CLOCK.now = time.time() - 1
    created = await cluster.client.create(CRONJOBS, body, NS)
    return _next_minute(timestamps.parse(created["metadata"]["creationTimestamp"]) or 0.0)


async def _wake(cluster: Cluster, name: str, at: float) -> None:
    """Move the clock to `at` and let the controller look at the CronJob."""
    CLOCK.now = at
    assert cluster.manager is not None
    cluster.manager.contexts["cronjob"].queue.add(f"{NS}/{name}")


async def _jobs(cluster: Cluster, cronjob: str) -> list[dict[str, Any]]:
    items = (await cluster.client.list(JOBS, NS)).get("items") or []
    return sorted((j for j in items if (cron_job.controlling_cronjob(j) or ("",))[0] == cronjob
                   and not j["metadata"].get("deletionTimestamp")), key=lambda j: j["metadata"]["name"])


async def _n_jobs(cluster: Cluster, cronjob: str, n: int) -> list[dict[str, Any]] | None:
    jobs = await _jobs(cluster, cronjob)
    return jobs if len(jobs) == n else None


async def _events(cluster: Cluster, name: str) -> list[tuple[str, str, str]]:
    items = (await cluster.client.list(EVENTS, NS)).get("items") or []
    return [(e["type"], e["reason"], e["message"]) for e in items
            if e["involvedObject"]["name"] == name and e["involvedObject"]["kind"] == "CronJob"]


async def _event(cluster: Cluster, name: str, reason: str) -> list[tuple[str, str, str]] | None:
    seen = await _events(cluster, name)
    return seen if any(r == reason for _, r, _ in seen) else None


async def _finish(cluster: Cluster, job: dict[str, Any], kind: str = "Complete") -> None:
    fresh = await cluster.client.get(JOBS, job["metadata"]["name"], NS)
    now = timestamps.format(CLOCK.now)
    status: dict[str, Any] = {"startTime": now, "conditions": [
        {"type": "SuccessCriteriaMet" if kind == "Complete" else "FailureTarget", "status": "True", "reason": "x",
         "message": "x", "lastTransitionTime": now, "lastProbeTime": now},
        {"type": kind, "status": "True", "reason": "x", "message": "x", "lastTransitionTime": now, "lastProbeTime": now}]}
    if kind == "Complete":
        status.update(completionTime=now, succeeded=1)
    else:
        status["failed"] = 1
    fresh["status"] = status
    await cluster.client.update(JOBS, fresh, subresource="status")


async def test_a_schedule_time_creates_its_job_and_a_finished_job_leaves_active(cluster: Cluster) -> None:
    due = await _create(cluster, _cronjob("every-minute"))
    cronjob = await cluster.client.get(CRONJOBS, "every-minute", NS)

    await _wake(cluster, "every-minute", due + 5)
    [job] = await eventually(lambda: _n_jobs(cluster, "every-minute", 1))

    meta = job["metadata"]
    assert meta["name"] == f"every-minute-{int(due) // 60}"
    assert meta["annotations"][cron_job.SCHEDULED_TIMESTAMP] == timestamps.format(due)
    assert meta["labels"]["app"] == "every-minute"
    assert meta["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "every-minute",
                                        "uid": cronjob["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]

    async def active() -> dict[str, Any] | None:
        got = await cluster.client.get(CRONJOBS, "every-minute", NS)
        return got if (got.get("status") or {}).get("active") else None
    status = (await eventually(active))["status"]
    assert [(a["kind"], a["name"], a["uid"]) for a in status["active"]] == [("Job", meta["name"], meta["uid"])]
    assert status["lastScheduleTime"] == timestamps.format(due)
    assert ("Normal", "SuccessfulCreate", f"Created job {meta['name']}") in await _events(cluster, "every-minute")

    await _finish(cluster, job)
    await _wake(cluster, "every-minute", due + 10)

    async def settled() -> dict[str, Any] | None:
        got = await cluster.client.get(CRONJOBS, "every-minute", NS)
        return got if "active" not in got["status"] and got["status"].get("lastSuccessfulTime") else None
    done = await eventually(settled)
    assert done["status"]["lastSuccessfulTime"] == timestamps.format(due + 5)
    seen = await eventually(lambda: _event(cluster, "every-minute", "SawCompletedJob"))
    assert ("Normal", "SawCompletedJob", f"Saw completed job: {meta['name']}, condition: Complete") in seen


async def test_forbid_skips_a_run_while_one_is_active_and_replace_deletes_it(cluster: Cluster) -> None:
    start = await _create(cluster, _cronjob("forbidding", concurrencyPolicy="Forbid"))
    assert await _create(cluster, _cronjob("replacing", concurrencyPolicy="Replace")) == start
    for name in ("forbidding", "replacing"):
        await _wake(cluster, name, start + 1)
        await eventually(lambda: _n_jobs(cluster, name, 1))

    for name in ("forbidding", "replacing"):
        await eventually(lambda: _active_count(cluster, name, 1))
        await _wake(cluster, name, start + 61)
    seen = await eventually(lambda: _event(cluster, "forbidding", "JobAlreadyActive"))
    assert ("Normal", "JobAlreadyActive",
            "Not starting job because prior execution is running and concurrency policy is Forbid") in seen
    assert [j["metadata"]["name"] for j in await _jobs(cluster, "forbidding")] == [f"forbidding-{int(start) // 60}"]

    [replacement] = await eventually(lambda: _named(cluster, "replacing", f"replacing-{int(start + 60) // 60}"))
    assert replacement["metadata"]["name"] == f"replacing-{int(start + 60) // 60}"
    seen = await eventually(lambda: _event(cluster, "replacing", "SuccessfulDelete"))
    assert ("Normal", "SuccessfulDelete", f"Deleted job replacing-{int(start) // 60}") in seen


async def _active_count(cluster: Cluster, name: str, n: int) -> bool:
    got = await cluster.client.get(CRONJOBS, name, NS)
    return len((got.get("status") or {}).get("active") or []) == n


async def _named(cluster: Cluster, cronjob: str, name: str) -> list[dict[str, Any]] | None:
    jobs = await _jobs(cluster, cronjob)
    return jobs if [j["metadata"]["name"] for j in jobs] == [name] else None


async def test_a_start_later_than_the_starting_deadline_is_skipped(cluster: Cluster) -> None:
    start = await _create(cluster, _cronjob("late", "*/2 * * * *", startingDeadlineSeconds=10))
    await _create(cluster, _cronjob("no-deadline", "*/2 * * * *"))
    due = start if int(start) % 120 == 0 else start + 60

    # 30 s late: outside the 10 s window; the CronJob without a deadline, queued after it, still runs.
    await _wake(cluster, "late", due + 30)
    await _wake(cluster, "no-deadline", due + 30)

    await eventually(lambda: _n_jobs(cluster, "no-deadline", 1))
    assert await _jobs(cluster, "late") == []
    late = await cluster.client.get(CRONJOBS, "late", NS)
    assert "lastScheduleTime" not in (late.get("status") or {})


async def test_a_suspended_cronjob_creates_nothing(cluster: Cluster) -> None:
    start = await _create(cluster, _cronjob("paused", suspend=True))
    await _wake(cluster, "paused", start + 180)
    # A CronJob created at the same time without suspend gets its Job: the pass did run.
    await _create(cluster, _cronjob("unpaused"))
    await _wake(cluster, "unpaused", start + 180)
    await eventually(lambda: _n_jobs(cluster, "unpaused", 1))
    assert await _jobs(cluster, "paused") == []


async def test_history_limits_delete_the_oldest_finished_jobs(cluster: Cluster) -> None:
    start = await _create(cluster, _cronjob("history", successfulJobsHistoryLimit=1, failedJobsHistoryLimit=0))
    names = []
    for step, kind in enumerate(("Complete", "Complete", "Failed")):
        await _wake(cluster, "history", start + 60 * step + 1)
        name = f"history-{int(start + 60 * step) // 60}"
        names.append(name)
        [job] = await eventually(lambda: _named_among(cluster, "history", name))
        await _finish(cluster, job, kind)
    await _wake(cluster, "history", start + 60 * 2 + 30)

    await eventually(lambda: _named(cluster, "history", names[1]))
    # The events are recorded asynchronously, after the deletes that the LIST above already shows.
    wanted = {("Normal", "SuccessfulDelete", f"Deleted job {names[0]}"),
              ("Normal", "SuccessfulDelete", f"Deleted job {names[2]}")}

    async def both_deletes_recorded() -> bool:
        return wanted <= set(await _events(cluster, "history"))
    await eventually(both_deletes_recorded)


async def _named_among(cluster: Cluster, cronjob: str, name: str) -> list[dict[str, Any]] | None:
    found = [j for j in await _jobs(cluster, cronjob) if j["metadata"]["name"] == name]
    return found or None


async def test_a_time_zone_sets_when_and_how_the_scheduled_time_is_written(cluster: Cluster) -> None:
    start = await _create(cluster, _cronjob("tokyo", "0 * * * *", timeZone="Asia/Tokyo"))
    hour = (int(start) // 3600 + 1) * 3600

    await _wake(cluster, "tokyo", hour + 5)
    [job] = await eventually(lambda: _n_jobs(cluster, "tokyo", 1))

    local = datetime.fromtimestamp(hour, timezone.utc).astimezone(ZoneInfo("Asia/Tokyo"))
    assert job["metadata"]["annotations"][cron_job.SCHEDULED_TIMESTAMP] == local.isoformat()
    assert job["metadata"]["annotations"][cron_job.SCHEDULED_TIMESTAMP].endswith("+09:00")


async def test_a_cronjob_far_behind_warns_about_too_many_missed_start_times(cluster: Cluster) -> None:
    start = await _create(cluster, _cronjob("behind"))
    await _wake(cluster, "behind", start + 200 * 60 + 1)

    seen = await eventually(lambda: _event(cluster, "behind", "TooManyMissedTimes"))
    assert ("Warning", "TooManyMissedTimes",
            "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew") in seen
    # Only the most recent missed time runs.
    [job] = await eventually(lambda: _n_jobs(cluster, "behind", 1))
    assert job["metadata"]["name"] == f"behind-{int(start + 200 * 60) // 60}"


async def test_kubectl_creates_a_job_from_a_cronjob(cluster: Cluster) -> None:
    await cluster.client.create(CRONJOBS, _cronjob("manual", suspend=True), NS)

    code, out, err = await cluster.kubectl("create", "job", "by-hand", "--from=cronjob/manual")

    assert (code, out.strip(), err) == (0, "job.batch/by-hand created", "")
    job = await cluster.client.get(JOBS, "by-hand", NS)
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert cron_job.controlling_cronjob(job) is not None
    try:
        await cluster.client.get(JOBS, "manual", NS)
    except errors.APIError as exc:
        assert errors.is_not_found(exc)
