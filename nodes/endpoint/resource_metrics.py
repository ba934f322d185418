"""`/metrics/resource`: the kubelet's resource metrics in Prometheus text, what metrics-server scrapes.

The kubelet's families and labels: node_cpu_usage_seconds_total, node_memory_working_set_bytes,
container_{cpu_usage_seconds_total,memory_working_set_bytes,start_time_seconds} {container,
namespace, pod}, pod_{cpu_usage_seconds_total,memory_working_set_bytes} {namespace, pod},
resource_scrape_error and the deprecated scrape_error; millisecond timestamps, families by name,
values as Go's `FormatFloat(v, 'g', -1)` (`info.sample_value`). Renders a `usage.NodeSample`.
"""

from __future__ import annotations

from nodes.endpoint.info import sample_value
from nodes.usage import NodeSample

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_HELP = {
    "container_cpu_usage_seconds_total": ("counter", "[STABLE] Cumulative cpu time consumed by the container in "
                                                     "core-seconds"),
    "container_memory_working_set_bytes": ("gauge", "[STABLE] Current working set of the container in bytes"),
    "container_start_time_seconds": ("gauge", "[STABLE] Start time of the container since unix epoch in seconds"),
    "node_cpu_usage_seconds_total": ("counter", "[STABLE] Cumulative cpu time consumed by the node in core-seconds"),
    "node_memory_working_set_bytes": ("gauge", "[STABLE] Current working set of the node in bytes"),
    "pod_cpu_usage_seconds_total": ("counter", "[STABLE] Cumulative cpu time consumed by the pod in core-seconds"),
    "pod_memory_working_set_bytes": ("gauge", "[STABLE] Current working set of the pod in bytes"),
    "resource_scrape_error": ("gauge", "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise"),
    "scrape_error": ("gauge", "[ALPHA] (Deprecated since 1.29.0) 1 if there was an error while getting container "
                              "metrics, 0 otherwise"),
}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(sample: NodeSample, *, scrape_error: bool = False) -> str:
    stamp = str(sample.time_ms)
    families: dict[str, list[tuple[dict[str, str], float]]] = {name: [] for name in _HELP}
    for (namespace, pod), containers in sorted(sample.pods().items()):
        for c in sorted(containers, key=lambda c: c.name):
            labels = {"container": c.name, "namespace": namespace, "pod": pod}
            families["container_cpu_usage_seconds_total"].append((labels, c.cpu_seconds))
            families["container_memory_working_set_bytes"].append((labels, c.memory))
            families["container_start_time_seconds"].append((labels, c.started))
        pod_labels = {"namespace": namespace, "pod": pod}
        families["pod_cpu_usage_seconds_total"].append((pod_labels, sum(c.cpu_total for c in containers) / 1e9))
        families["pod_memory_working_set_bytes"].append((pod_labels, sum(c.memory for c in containers)))
    families["node_cpu_usage_seconds_total"].append(({}, sample.cpu_seconds))
    families["node_memory_working_set_bytes"].append(({}, sample.memory))
    lines: list[str] = []
    for name, (kind, help_text) in _HELP.items():
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        if name in ("resource_scrape_error", "scrape_error"):
            lines.append(f"{name} {int(scrape_error)}")
            continue
        for labels, value in families[name]:
            rendered = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
            series = f"{name}{{{rendered}}}" if rendered else name
            lines.append(f"{series} {sample_value(value)} {stamp}")
    return "\n".join(lines) + "\n"
