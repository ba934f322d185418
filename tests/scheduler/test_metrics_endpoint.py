"""The scheduler's /metrics and /healthz (scheduler/serving.py, scheduler/metrics.py).

A gang that fits, a gang that cannot, and a lone pod go through the real scheduling loop (stores
filled by the test, as in podgroup/test_group_cycle.py); then /metrics is scraped over HTTP and
parsed with prometheus_client's text parser, and the counters are checked against what happened.
"""

from __future__ import annotations

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from client import resources as api
from scheduler import serving
from scheduler.metrics import ATTEMPT_BUCKETS
from tests.scheduler.fakes import pod
from tests.scheduler.podgroup.test_group_cycle import add_group, add_pod, group, make, member, run_once

PROFILE = "default-scheduler"


def _samples(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def _types(text: str) -> dict[str, str]:
    return {f.name: f.type for f in text_string_to_metric_families(text)}


async def _get(port: int, path: str) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}{path}") as resp:
            return resp.status, resp.headers.get("Content-Type", ""), await resp.text()


async def test_metrics_count_pod_and_pod_group_attempts_after_a_gang_schedules() -> None:
    sched, binder, _, _ = make(nodes=4, cpu="1")
    runner, port = await serving.start(sched, "127.0.0.1", 0)
    try:
        status, _, before = await _get(port, "/metrics")
        assert status == 200
        assert "scheduler_podgroup_schedule_attempts_total" not in _samples(before)  # no sample before any attempt
        add_group(sched, group("fits", 3))
        for i in range(3):
            add_pod(sched, member(f"f{i}", "fits"))
        await run_once(sched)  # the whole gang in one group cycle
        assert sorted(binder.bound) == ["f0", "f1", "f2"]
        add_group(sched, group("big", 2))
        for i in range(2):
            add_pod(sched, member(f"b{i}", "big", cpu="2"))  # no node has 2 cpu: the gang is rejected whole
        await run_once(sched)
        add_pod(sched, pod("loner", requests={"cpu": "1"}))
        await run_once(sched)

        status, content_type, text = await _get(port, "/metrics")
        assert status == 200 and content_type.startswith("text/plain; version=0.0.4")
        samples = _samples(text)
        assert _types(text)["scheduler_podgroup_schedule_attempts"] == "counter"
        assert _types(text)["scheduler_podgroup_scheduling_attempt_duration_seconds"] == "histogram"
        groups = samples["scheduler_podgroup_schedule_attempts_total"]
        assert groups == {(("profile", PROFILE), ("result", "scheduled")): 1.0,
                          (("profile", PROFILE), ("result", "unschedulable")): 1.0}
        latency = samples["scheduler_podgroup_scheduling_attempt_duration_seconds_count"]
        assert latency[(("profile", PROFILE), ("result", "scheduled"))] == 1.0
        assert samples["scheduler_podgroup_scheduling_algorithm_duration_seconds_count"] == {(): 2.0}
        buckets = samples["scheduler_podgroup_scheduling_algorithm_duration_seconds_bucket"]
        assert sorted(float(dict(k)["le"]) for k in buckets) == sorted([*ATTEMPT_BUCKETS, float("inf")])
        assert buckets[(("le", "+Inf"),)] == 2.0
        pods = samples["scheduler_schedule_attempts_total"]
        assert pods == {(("profile", PROFILE), ("result", "scheduled")): 4.0,
                        (("profile", PROFILE), ("result", "unschedulable")): 2.0}
        pod_latency = samples["scheduler_scheduling_attempt_duration_seconds_count"]
        assert pod_latency[(("profile", PROFILE), ("result", "scheduled"))] == 4.0
        # The rejected gang's two pods wait in the unschedulable queue (or backoff), none active.
        pending = {dict(k)["queue"]: v for k, v in samples["scheduler_pending_pods"].items()}
        assert set(pending) == {"active", "backoff", "unschedulable", "gated"}
        assert pending["active"] == 0 and pending["backoff"] + pending["unschedulable"] == 2
    finally:
        await runner.cleanup()


async def test_health_endpoints_answer_ok_and_unknown_paths_404() -> None:
    sched, _, _, _ = make(nodes=1)
    runner, port = await serving.start(sched, "127.0.0.1", 0)
    try:
        for path in ("/healthz", "/livez", "/readyz"):
            assert (await _get(port, path))[0::2] == (200, "ok")
        assert (await _get(port, "/nope"))[0] == 404
    finally:
        await runner.cleanup()


async def test_readyz_waits_for_the_informers_while_healthz_stays_ok() -> None:
    sched, _, _, _ = make(nodes=1)

    class Unsynced:
        has_synced = False

    sched.informers[api.PODS] = Unsynced()  # type: ignore[assignment]
    sched._watched.add(api.PODS)  # noqa: SLF001 - a served kind whose informer has not listed yet
    runner, port = await serving.start(sched, "127.0.0.1", 0)
    try:
        status, _, body = await _get(port, "/readyz")
        assert status == 500
        assert body == "[+]ping ok\n[-]informer v1/pods has not synced failed: reason withheld\nreadyz check failed\n"
        assert (await _get(port, "/healthz"))[0::2] == (200, "ok")
    finally:
        await runner.cleanup()
