"""Prometheus metrics with kube-apiserver's names, rendered as text for `/metrics`.

Counters and histograms are kept per label set in plain dicts (one process, one event loop: no
locks). `apiserver_storage_objects` is computed at scrape time from the store. Names follow 1.36:
`etcd_bookmark_total` is the counter that replaced the `etcd_bookmark_counts` gauge (kubernetes
PR #136483). `kubernetes_feature_enabled` is component-base's gauge of every registered feature
gate (1 on, 0 off; stage ALPHA, BETA, DEPRECATED, or empty for GA), which clients such as the
conformance suite read to learn the cluster's gates. Fed by the app's middleware
(`observe_request`) and the watch handler (`bookmark`).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from typing import Iterable

_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60)
_REQUEST_LABELS = ("code", "component", "dry_run", "group", "resource", "scope", "subresource", "verb", "version")
_DURATION_LABELS = ("component", "dry_run", "group", "resource", "scope", "subresource", "verb", "version")


class Metrics:
    def __init__(self) -> None:
        self.requests: dict[tuple[str, ...], int] = defaultdict(int)
        self.durations: dict[tuple[str, ...], list[float]] = {}
        self.bookmarks: dict[str, int] = defaultdict(int)
        self.watchers: dict[tuple[str, str], int] = defaultdict(int)

    def observe_request(self, labels: dict[str, str], seconds: float) -> None:
        self.requests[tuple(labels.get(k, "") for k in _REQUEST_LABELS)] += 1
        key = tuple(labels.get(k, "") for k in _DURATION_LABELS)
        counts = self.durations.get(key)
        if counts is None:
            counts = self.durations[key] = [0.0] * (len(_BUCKETS) + 2)  # buckets…, count, sum
        counts[bisect.bisect_left(_BUCKETS, seconds)] += 1
        counts[-2] += 1
        counts[-1] += seconds

    def bookmark(self, resource: str) -> None:
        self.bookmarks[resource] += 1

    def render(self, storage_objects: Iterable[tuple[str, int]],
               feature_gates: Iterable[tuple[str, str, bool]] = ()) -> str:
        """The text exposition; `feature_gates` is (name, stage, enabled) per registered gate."""
        lines: list[str] = []
        lines += _header("apiserver_request_total", "counter",
                         "Counter of apiserver requests broken out for each verb, dry run value, group, version, "
                         "resource, scope, component, and HTTP response code.")
        for key, value in sorted(self.requests.items()):
            lines.append(f"apiserver_request_total{{{_labels(_REQUEST_LABELS, key)}}} {value}")
        lines += _header("apiserver_request_duration_seconds", "histogram",
                         "Response latency distribution in seconds for each verb, dry run value, group, version, "
                         "resource, subresource, scope and component.")
        for key, counts in sorted(self.durations.items()):
            base = _labels(_DURATION_LABELS, key)
            running = 0.0
            for bound, count in zip(_BUCKETS, counts):
                running += count
                lines.append(f'apiserver_request_duration_seconds_bucket{{{base},le="{bound}"}} {int(running)}')
            lines.append(f'apiserver_request_duration_seconds_bucket{{{base},le="+Inf"}} {int(counts[-2])}')
            lines.append(f"apiserver_request_duration_seconds_sum{{{base}}} {counts[-1]}")
            lines.append(f"apiserver_request_duration_seconds_count{{{base}}} {int(counts[-2])}")
        lines += _header("apiserver_storage_objects", "gauge",
                         "[STABLE] Number of stored objects at the time of last check split by kind.")
        for resource, count in sorted(storage_objects):
            lines.append(f'apiserver_storage_objects{{resource="{resource}"}} {count}')
        lines += _header("etcd_bookmark_total", "counter",
                         "Number of etcd bookmarks (progress notify events) split by kind.")
        for resource, count in sorted(self.bookmarks.items()):
            lines.append(f'etcd_bookmark_total{{resource="{resource}"}} {count}')
        lines += _header("kubernetes_feature_enabled", "gauge",
                         "[BETA] This metric records the data about the stage and enablement of a k8s feature.")
        for name, stage, enabled in sorted(feature_gates):
            lines.append(f'kubernetes_feature_enabled{{name="{name}",stage="{stage}"}} {int(enabled)}')
        return "\n".join(lines) + "\n"


def _header(name: str, kind: str, help_text: str) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]


def _labels(names: tuple[str, ...], values: tuple[str, ...]) -> str:
    return ",".join(f'{n}="{_escape(v)}"' for n, v in zip(names, values))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
