"""kube-scheduler's Prometheus metrics that haru measures, rendered as text for `/metrics`.

Names, types, labels, help texts and buckets follow kube-scheduler 1.36 (pkg/scheduler/metrics):
the per-pod attempt counter and latency, the pending-pods gauge (read from the queue at scrape
time), and KEP-4671's PodGroup attempt counter and latencies (alpha, GenericWorkload). Fed by
`Scheduler` (pod attempts, the group attempt's clock) and `podgroup/group_cycle.py` (group results
and the placement algorithm); served by `scheduler/serving.py`. One event loop: no locks.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Mapping

SCHEDULED, UNSCHEDULABLE, ERROR = "scheduled", "unschedulable", "error"
# ExponentialBuckets(0.001, 2, 15): 1ms … ~16.4s, as upstream's attempt and algorithm latencies.
ATTEMPT_BUCKETS = tuple(0.001 * 2 ** i for i in range(15))
PENDING_QUEUES = ("active", "backoff", "unschedulable", "gated")


class _Histogram:
    """One label set's bucket counts (not cumulative; rendering adds them up), count and sum."""

    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.count = 0
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        index = bisect.bisect_left(self.buckets, seconds)  # le is inclusive: bisect_left
        if index < len(self.counts):
            self.counts[index] += 1
        self.count += 1
        self.sum += seconds


class SchedulerMetrics:
    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.attempts: dict[tuple[str, str], int] = {}
        self.attempt_latency: dict[tuple[str, str], _Histogram] = {}
        self.group_attempts: dict[tuple[str, str], int] = {}
        self.group_latency: dict[tuple[str, str], _Histogram] = {}
        self.group_algorithm = _Histogram(ATTEMPT_BUCKETS)
        self._group_started: float | None = None

    # -- pods ----------------------------------------------------------------------------------

    def pod_attempt(self, result: str, profile: str, seconds: float) -> None:
        """One pod's attempt ended: bound (`scheduled`), or back to the queue (`unschedulable`/`error`)."""
        key = (result, profile)
        self.attempts[key] = self.attempts.get(key, 0) + 1
        _histogram(self.attempt_latency, key).observe(seconds)

    # -- pod groups ----------------------------------------------------------------------------

    def pod_group_started(self) -> None:
        """The scheduling loop starts one group's cycle (the loop runs one at a time)."""
        self._group_started = self.clock()

    def pod_group_attempt(self, result: str, profile: str) -> None:
        """The group cycle decided: the group is placed, or rejected whole."""
        started, self._group_started = self._group_started, None
        key = (result, profile)
        self.group_attempts[key] = self.group_attempts.get(key, 0) + 1
        _histogram(self.group_latency, key).observe(0.0 if started is None else self.clock() - started)

    def pod_group_algorithm(self, seconds: float) -> None:
        self.group_algorithm.observe(seconds)

    # -- text ----------------------------------------------------------------------------------

    def render(self, pending: Mapping[str, int]) -> str:
        lines: list[str] = []
        _counter(lines, "scheduler_schedule_attempts_total",
                 "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
                 "not be scheduled, while 'error' means an internal scheduler problem.", self.attempts)
        _histograms(lines, "scheduler_scheduling_attempt_duration_seconds",
                    "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)",
                    self.attempt_latency)
        lines += _header("scheduler_pending_pods", "gauge",
                         "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in "
                         "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods "
                         "in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
                         "number of unschedulable pods that the scheduler never attempted to schedule because they "
                         "are gated.")
        for queue in PENDING_QUEUES:
            lines.append(f'scheduler_pending_pods{{queue="{queue}"}} {int(pending.get(queue, 0))}')
        _counter(lines, "scheduler_podgroup_schedule_attempts_total",
                 "[ALPHA] Number of attempts to schedule pod group, by the result. 'unschedulable' means a pod "
                 "group could not be scheduled, while 'error' means an internal scheduler problem.",
                 self.group_attempts)
        _histograms(lines, "scheduler_podgroup_scheduling_attempt_duration_seconds",
                    "[ALPHA] Pod group scheduling attempt latency in seconds", self.group_latency)
        lines += _header("scheduler_podgroup_scheduling_algorithm_duration_seconds", "histogram",
                         "[ALPHA] Pod group scheduling algorithm latency in seconds")
        lines += _histogram_lines("scheduler_podgroup_scheduling_algorithm_duration_seconds", "", self.group_algorithm)
        return "\n".join(lines) + "\n"


def _histogram(table: dict[tuple[str, str], _Histogram], key: tuple[str, str]) -> _Histogram:
    found = table.get(key)
    if found is None:
        found = table[key] = _Histogram(ATTEMPT_BUCKETS)
    return found


def _header(name: str, kind: str, help_text: str) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]


def _result_profile(key: tuple[str, str]) -> str:
    # Label names sorted, as client_golang writes them.
    return f'profile="{_escape(key[1])}",result="{_escape(key[0])}"'


def _counter(lines: list[str], name: str, help_text: str, values: Mapping[tuple[str, str], int]) -> None:
    lines += _header(name, "counter", help_text)
    for key, value in sorted(values.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        lines.append(f"{name}{{{_result_profile(key)}}} {value}")


def _histograms(lines: list[str], name: str, help_text: str, values: Mapping[tuple[str, str], _Histogram]) -> None:
    lines += _header(name, "histogram", help_text)
    for key, histogram in sorted(values.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        lines += _histogram_lines(name, _result_profile(key), histogram)


def _histogram_lines(name: str, labels: str, histogram: _Histogram) -> list[str]:
    sep = "," if labels else ""
    out = []
    running = 0
    for bound, count in zip(histogram.buckets, histogram.counts):
        running += count
        out.append(f'{name}_bucket{{{labels}{sep}le="{bound:g}"}} {running}')
    out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {histogram.count}')
    suffix = f"{{{labels}}}" if labels else ""
    out.append(f"{name}_sum{suffix} {histogram.sum!r}")
    out.append(f"{name}_count{suffix} {histogram.count}")
    return out


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
