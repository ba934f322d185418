"""Simulated resource usage of a hollow kubelet's containers, pods and node (what cAdvisor measures).

A running container uses its `resources.requests` (1m and 4Mi without), wobbling ±5% and never
above its limits; `usage.haru.dev/<container>: "cpu=250m,memory=64Mi"` (either part alone) sets it
exactly, CPU still capped at the limit as CFS throttles it. A node uses its running containers plus
a system overhead (100m, 400Mi). `Meter.sample(view)` keeps exact, ever-growing CPU counters; one
`Meter` per kubelet (`server.py`), rendered by `endpoint/resource_metrics.py` and `endpoint/info.py`.
"""

from __future__ import annotations

import datetime
import math
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from nodes.kubelet import resources
from nodes.runtime_view import NodeView

ANNOTATION_PREFIX = "usage.haru.dev/"
IDLE_CPU = 0.001  # cores
IDLE_MEMORY = 4 * 2**20  # bytes
SYSTEM_CPU = 0.1
SYSTEM_MEMORY = 400 * 2**20
WOBBLE = 0.05
# Periods of the wobble, in seconds: CPU moves within a minute, memory drifts over five.
CPU_PERIOD = 60.0
MEMORY_PERIOD = 300.0


@dataclass(frozen=True)
class Demand:
    """What one container uses on average: cores and bytes; `exact` (annotated) does not wobble."""

    cpu: float
    memory: float
    exact: bool = False
    phase: float = 0.0  # radians: each container wobbles out of step with the others

    def cpu_at(self, t: float) -> float:
        if self.exact:
            return self.cpu
        return self.cpu * (1 + WOBBLE * math.sin(2 * math.pi * t / CPU_PERIOD + self.phase))

    def cpu_between(self, t0_ms: int, t1_ms: int) -> int:
        """Nano core-seconds used from t0 to t1 (unix milliseconds): the integral of `cpu_at`.

        Integers on a millisecond grid keep the counters exact: an annotated 250m over 500 ms is
        125000000 ns, so metrics-server's rate comes out as 250m, not 250000001n."""
        if t1_ms <= t0_ms:
            return 0
        steady = self.cpu * (t1_ms - t0_ms) * 1_000_000
        if self.exact:
            return round(steady)
        omega = 2 * math.pi / CPU_PERIOD
        swing = math.cos(omega * t0_ms / 1000 + self.phase) - math.cos(omega * t1_ms / 1000 + self.phase)
        return round(steady + self.cpu * WOBBLE * swing / omega * 1e9)

    def memory_at(self, t: float) -> int:
        if self.exact:
            return int(self.memory)
        return int(self.memory * (1 + WOBBLE * math.sin(2 * math.pi * t / MEMORY_PERIOD + self.phase)))


class AnnotationError(ValueError):
    pass


def parse_annotation(text: str) -> dict[str, float]:
    """`cpu=250m,memory=64Mi` → {"cpu": 0.25, "memory": 67108864.0}; AnnotationError if malformed."""
    found: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = (piece.strip() for piece in part.partition("="))
        if not sep or name not in ("cpu", "memory") or name in found:
            raise AnnotationError(f"want cpu=<quantity>,memory=<quantity>, got {text!r}")
        try:
            amount = float(resources.parse(value))
        except ValueError as exc:
            raise AnnotationError(str(exc)) from None
        if amount < 0:
            raise AnnotationError(f"{name} must not be negative, got {value!r}")
        found[name] = amount
    return found


def _phase(*names: str) -> float:
    # Stable across processes (str hash is salted): the same container wobbles the same way.
    return (zlib.crc32("/".join(names).encode()) % 3600) / 3600 * 2 * math.pi


def _amount(values: dict[str, Any] | None, name: str) -> float | None:
    raw = (values or {}).get(name)
    if raw is None:
        return None
    try:
        return float(resources.parse(raw))
    except ValueError:
        return None


def _bounded(base: float, limit: float | None, wobbles: bool) -> float:
    # The top of the wobble stays at or under the limit.
    if limit is None:
        return base
    return min(base, limit / (1 + WOBBLE) if wobbles else limit)


def demand(pod: dict[str, Any], container: dict[str, Any]) -> Demand:
    """A container's demand from its requests and limits, or from its `usage.haru.dev/` annotation."""
    meta = pod.get("metadata") or {}
    name = container.get("name", "")
    res = container.get("resources") or {}
    requests, limits = res.get("requests"), res.get("limits")
    cpu_limit, memory_limit = _amount(limits, "cpu"), _amount(limits, "memory")
    phase = _phase(meta.get("uid", ""), name)
    annotation = (meta.get("annotations") or {}).get(ANNOTATION_PREFIX + name)
    if annotation is not None:
        try:
            set_ = parse_annotation(annotation)
        except AnnotationError:
            set_ = {}  # a bad annotation is ignored, as a bad behaviour annotation falls back
        if set_:
            cpu = set_.get("cpu", _bounded(_amount(requests, "cpu") or IDLE_CPU, cpu_limit, False))
            memory = set_.get("memory", _bounded(_amount(requests, "memory") or IDLE_MEMORY, memory_limit, False))
            return Demand(min(cpu, cpu_limit) if cpu_limit is not None else cpu, memory, exact=True, phase=phase)
    cpu = _bounded(_amount(requests, "cpu") or IDLE_CPU, cpu_limit, True)
    memory = _bounded(_amount(requests, "memory") or IDLE_MEMORY, memory_limit, True)
    return Demand(cpu, memory, phase=phase)


@dataclass(frozen=True)
class ContainerSample:
    namespace: str
    pod: str
    name: str
    started: float  # unix seconds; the counter was 0 then
    cpu_total: int  # cumulative nano core-seconds since `started`
    cpu_cores: float  # the rate right now
    memory: int  # working set, bytes

    @property
    def cpu_seconds(self) -> float:
        return self.cpu_total / 1e9


@dataclass(frozen=True)
class NodeSample:
    time_ms: int  # unix milliseconds: the samples' timestamp
    started: float
    cpu_total: int
    cpu_cores: float
    memory: int
    memory_capacity: int
    containers: tuple[ContainerSample, ...]

    @property
    def time(self) -> float:
        return self.time_ms / 1000

    @property
    def cpu_seconds(self) -> float:
        return self.cpu_total / 1e9

    def pods(self) -> dict[tuple[str, str], list[ContainerSample]]:
        by_pod: dict[tuple[str, str], list[ContainerSample]] = {}
        for c in self.containers:
            by_pod.setdefault((c.namespace, c.pod), []).append(c)
        return by_pod


@dataclass
class _Counter:
    """One container run's CPU counter (nano core-seconds): its value at `at` (unix ms), and the
    demand it grows with since."""

    at: int
    value: int
    demand: Demand


def _stamp(text: str | None) -> float | None:
    if not text:
        return None
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _started(pod: dict[str, Any]) -> dict[str, float]:
    status = pod.get("status") or {}
    found: dict[str, float] = {}
    for entry in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        started = _stamp(((entry.get("state") or {}).get("running") or {}).get("startedAt"))
        if started is not None:
            found[entry.get("name", "")] = started
    return found


def _specs(pod: dict[str, Any]) -> dict[str, dict[str, Any]]:
    spec = pod.get("spec") or {}
    return {c.get("name", ""): c for key in ("initContainers", "containers") for c in spec.get(key) or []}


@dataclass
class Meter:
    """One node's usage over time; `sample` is cheap and may be called on every scrape."""

    clock: Any = time.time
    _counters: dict[tuple[str, str, float], _Counter] = field(default_factory=dict)
    _node_at: int | None = None
    _node_value: int = 0

    def sample(self, view: NodeView) -> NodeSample:
        now_ms = round(float(self.clock()) * 1000)
        now = now_ms / 1000
        node = view.node()
        status = node.get("status") or {}
        node_started = _stamp((node.get("metadata") or {}).get("creationTimestamp")) or now
        containers: list[ContainerSample] = []
        seen: set[tuple[str, str, float]] = set()
        grown = 0
        for pod in view.pods():
            obj = pod.object()
            specs, started = _specs(obj), _started(obj)
            for name, container in pod.containers().items():
                if not container.running() or name not in specs:
                    continue
                since = min(started.get(name, now), now)
                key = (pod.uid, name, since)
                want = demand(obj, specs[name])
                counter = self._counters.get(key)
                if counter is None:
                    counter = self._counters[key] = _Counter(round(since * 1000), 0, want)
                before = counter.value
                counter.value += counter.demand.cpu_between(counter.at, now_ms)
                counter.at, counter.demand = now_ms, want  # a changed annotation counts from now on
                grown += counter.value - before
                seen.add(key)
                containers.append(ContainerSample(pod.namespace, pod.name, name, since, counter.value,
                                                  want.cpu_at(now), want.memory_at(now)))
        for key in set(self._counters) - seen:
            del self._counters[key]  # ended runs: their time stays in the node's counter
        system = Demand(SYSTEM_CPU, SYSTEM_MEMORY, phase=_phase(view.name))
        if self._node_at is None:
            # The first look: the system has run since the node registered.
            self._node_at = round(min(node_started, now) * 1000)
        self._node_value += grown + system.cpu_between(self._node_at, now_ms)
        self._node_at = now_ms
        capacity = int(_amount(status.get("capacity"), "memory") or 0)
        memory = system.memory_at(now) + sum(c.memory for c in containers)
        return NodeSample(now_ms, node_started, self._node_value,
                          system.cpu_at(now) + sum(c.cpu_cores for c in containers),
                          min(memory, capacity) if capacity else memory, capacity, tuple(containers))
