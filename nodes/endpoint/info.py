"""The kubelet's read-only documents, computed from a `NodeView` on every request.

`/pods` (a PodList of what the kubelet runs), `/configz` (`{"kubeletconfig": …}`), `/spec`
(cAdvisor's MachineInfo), `/logs/` (a FileServer listing of the node's log files),
`/stats/summary` (the summary API's node and pod stats) and `/metrics` (Prometheus text with the
kubelet's own metric names: kubelet_node_name, kubelet_running_pods, kubelet_running_containers,
kubelet_http_requests_total, kubelet_http_inflight_requests, kubernetes_build_info) with
`/metrics/resource` (the usage metrics-server reads). Called by `server.py`.
"""

from __future__ import annotations

import datetime
import decimal
import html
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from nodes.runtime_view import NodeView, PodView

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def quantity(value: str | int | None) -> float:
    """A resource.Quantity string as a number (cores, bytes)."""
    if value is None or value == "":
        return 0.0
    text = str(value)
    for suffix, factor in _BINARY.items():
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    if text[-1:] in _DECIMAL and not text[-1:].isdigit():
        return float(text[:-1]) * _DECIMAL[text[-1]]
    return float(text)


def _rfc3339(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(stamp: str | None) -> datetime.datetime | None:
    if not stamp:
        return None
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def pod_list(view: NodeView) -> dict[str, Any]:
    return {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [p.object() for p in view.pods()]}


def log_listing(view: NodeView, folder: str) -> str | None:
    """Go's http.FileServer listing of one folder under /var/log (None: no such folder)."""
    prefix = folder.strip("/") + "/" if folder.strip("/") else ""
    names = set()
    for path in view.log_files():
        if path.startswith(prefix):
            rest = path[len(prefix):]
            names.add(rest.split("/")[0] + ("/" if "/" in rest else ""))
    if prefix and not names:
        return None
    entries = "".join(f'<a href="{html.escape(n)}">{html.escape(n)}</a>\n' for n in sorted(names))
    return f'<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n{entries}</pre>\n'


def configz(view: NodeView) -> dict[str, Any]:
    return {"kubeletconfig": view.kubelet_config()}


def machine_info(view: NodeView) -> dict[str, Any]:
    node = view.node()
    status = node.get("status") or {}
    capacity = status.get("capacity") or {}
    info = status.get("nodeInfo") or {}
    cores = int(quantity(capacity.get("cpu")))
    memory = int(quantity(capacity.get("memory")))
    storage = int(quantity(capacity.get("ephemeral-storage")))
    return {
        "timestamp": _rfc3339(datetime.datetime.now(datetime.timezone.utc)),
        "num_cores": cores, "num_physical_cores": cores, "num_sockets": 1, "cpu_frequency_khz": 2_400_000,
        "memory_capacity": memory, "swap_capacity": 0, "hugepages": [],
        "machine_id": info.get("machineID", ""), "system_uuid": info.get("systemUUID", ""),
        "boot_id": info.get("bootID", ""),
        "filesystems": [{"device": "/dev/root", "capacity": storage, "type": "vfs", "inodes": storage // 4096,
                         "has_inodes": True}],
        "disk_map": {}, "network_devices": [],
        "topology": [{"node_id": 0, "memory": memory, "hugepages": None,
                      "cores": [{"core_id": i, "thread_ids": [i], "caches": None, "uncore_caches": None,
                                 "socket_id": 0} for i in range(cores)], "caches": None, "distances": [10]}],
        "cloud_provider": "Unknown", "instance_type": "Unknown", "instance_id": "None",
    }


def _started(pod: dict[str, Any], container: str) -> datetime.datetime | None:
    for entry in (pod.get("status") or {}).get("containerStatuses") or []:
        if entry.get("name") == container:
            return _parse(((entry.get("state") or {}).get("running") or {}).get("startedAt"))
    return None


def _cpu(now: datetime.datetime, nano_cores: int, since: datetime.datetime | None) -> dict[str, Any]:
    # The simulated usage is steady, so the cumulative counter is the rate times the time running.
    seconds = max((now - since).total_seconds(), 0.0) if since else 0.0
    return {"time": _rfc3339(now), "usageNanoCores": nano_cores, "usageCoreNanoSeconds": int(nano_cores * seconds)}


def _memory(now: datetime.datetime, working_set: int, available: int | None = None) -> dict[str, Any]:
    memory: dict[str, Any] = {"time": _rfc3339(now), "usageBytes": working_set, "workingSetBytes": working_set,
                              "rssBytes": working_set, "pageFaults": 0, "majorPageFaults": 0}
    if available is not None:
        memory["availableBytes"] = max(available - working_set, 0)
    return memory


def _pod_stats(now: datetime.datetime, pod: PodView) -> tuple[dict[str, Any], int, int]:
    obj = pod.object()
    containers, cpu_total, memory_total = [], 0, 0
    for name, container in pod.containers().items():
        if not container.running():
            continue
        usage = container.usage()
        started = _started(obj, name)
        cpu_total += usage.cpu_nano_cores
        memory_total += usage.memory_working_set_bytes
        containers.append({"name": name, "startTime": _rfc3339(started or now),
                           "cpu": _cpu(now, usage.cpu_nano_cores, started),
                           "memory": _memory(now, usage.memory_working_set_bytes)})
    pod_start = _parse((obj.get("status") or {}).get("startTime"))
    stats = {"podRef": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
             "startTime": _rfc3339(pod_start or now), "containers": containers,
             "cpu": _cpu(now, cpu_total, pod_start), "memory": _memory(now, memory_total)}
    return stats, cpu_total, memory_total


def summary(view: NodeView) -> dict[str, Any]:
    now = datetime.datetime.now(datetime.timezone.utc)
    node = view.node()
    created = _parse((node.get("metadata") or {}).get("creationTimestamp"))
    memory = int(quantity(((node.get("status") or {}).get("capacity") or {}).get("memory")))
    pods, cpu_total, memory_total = [], 0, 0
    for pod in view.pods():
        stats, cpu, mem = _pod_stats(now, pod)
        pods.append(stats)
        cpu_total += cpu
        memory_total += mem
    return {"node": {"nodeName": view.name, "systemContainers": [], "startTime": _rfc3339(created or now),
                     "cpu": _cpu(now, cpu_total, created), "memory": _memory(now, memory_total, memory)},
            "pods": pods}


@dataclass
class RequestCounter:
    """kubelet_http_requests_total and kubelet_http_inflight_requests, kept by `server.py`."""

    total: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    inflight: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    @staticmethod
    def labels(method: str, path: str, long_running: bool) -> tuple[str, str, str]:
        # The kubelet labels by the path's first segment ("pods", "exec", "containerLogs").
        return method, path.strip("/").split("/")[0], "true" if long_running else "false"


def sample_value(value: float) -> str:
    """A sample value as Prometheus' Go client writes it (strconv 'g', shortest): 6.7108864e+07."""
    if value == 0:
        return "0"
    exact = decimal.Decimal(repr(float(value))).normalize()
    digits = "".join(map(str, exact.as_tuple().digits))
    exponent = exact.adjusted()
    sign = "-" if value < 0 else ""
    if exponent < -4 or exponent >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    return sign + format(abs(exact), "f")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def metrics(view: NodeView, requests: RequestCounter) -> str:
    lines: list[str] = []

    def family(name: str, kind: str, help_text: str, samples: list[tuple[dict[str, str], float]]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            rendered = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
            lines.append(f"{name}{{{rendered}}} {sample_value(value)}" if rendered else f"{name} {sample_value(value)}")

    info = (view.node().get("status") or {}).get("nodeInfo") or {}
    version = info.get("kubeletVersion", "")
    family("kubernetes_build_info", "gauge", "[ALPHA] A metric with a constant '1' value labeled by major, minor, git "
           "version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, "
           "and platform on which it is running.",
           [({"git_version": version, "major": version.lstrip("v").split(".")[0],
              "minor": (version.split(".") + ["", ""])[1], "platform": "linux/amd64"}, 1)])
    family("kubelet_node_name", "gauge", "[ALPHA] The node's name. The count is always 1.", [({"node": view.name}, 1)])
    pods = list(view.pods())
    states: Counter[str] = Counter()
    running_pods = 0
    for pod in pods:
        running = [c for c in pod.containers().values() if c.running()]
        running_pods += bool(running)
        for entry in (pod.object().get("status") or {}).get("containerStatuses") or []:
            state = next(iter(entry.get("state") or {"waiting": {}}))
            states[{"running": "running", "terminated": "exited", "waiting": "created"}.get(state, "unknown")] += 1
    family("kubelet_running_pods", "gauge", "[ALPHA] Number of pods that have a running pod sandbox",
           [({}, running_pods)])
    family("kubelet_running_containers", "gauge", "[ALPHA] Number of containers currently running",
           [({"container_state": state}, count) for state, count in sorted(states.items())])
    family("kubelet_http_requests_total", "counter", "[ALPHA] Number of the http requests received since the server "
           "started", [({"method": m, "path": p, "long_running": lr, "server_type": "readwrite"}, n)
                       for (m, p, lr), n in sorted(requests.total.items())])
    family("kubelet_http_inflight_requests", "gauge", "[ALPHA] Number of the inflight http requests",
           [({"method": m, "path": p, "long_running": lr, "server_type": "readwrite"}, n)
            for (m, p, lr), n in sorted(requests.inflight.items())])
    return "\n".join(lines) + "\n"



def resource_metrics(view: NodeView) -> str:
    """`/metrics/resource`, what metrics-server scrapes: the summary's usage as STABLE metric families."""
    stats = summary(view)
    lines: list[str] = []

    def family(name: str, kind: str, help_text: str, samples: list[tuple[dict[str, str], float, str]]) -> None:
        lines.append(f"# HELP {name} [STABLE] {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        for labels, value, at in samples:
            rendered = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
            stamp = f" {_millis(at)}" if at else ""
            lines.append(f"{name}{{{rendered}}} {sample_value(value)}{stamp}" if rendered else f"{name} {sample_value(value)}{stamp}")

    node = stats["node"]
    containers = [({"container": c["name"], "namespace": p["podRef"]["namespace"], "pod": p["podRef"]["name"]}, c)
                  for p in stats["pods"] for c in p["containers"]]
    pods = [({"namespace": p["podRef"]["namespace"], "pod": p["podRef"]["name"]}, p) for p in stats["pods"]]
    family("container_cpu_usage_seconds_total", "counter",
           "Cumulative cpu time consumed by the container in core-seconds",
           [(labels, c["cpu"]["usageCoreNanoSeconds"] / 1e9, c["cpu"]["time"]) for labels, c in containers])
    family("container_memory_working_set_bytes", "gauge", "Current working set of the container in bytes",
           [(labels, c["memory"]["workingSetBytes"], c["memory"]["time"]) for labels, c in containers])
    family("container_start_time_seconds", "gauge", "Start time of the container since unix epoch in seconds",
           [(labels, _seconds(c["startTime"]), c["startTime"]) for labels, c in containers])
    family("node_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the node in core-seconds",
           [({}, node["cpu"]["usageCoreNanoSeconds"] / 1e9, node["cpu"]["time"])])
    family("node_memory_working_set_bytes", "gauge", "Current working set of the node in bytes",
           [({}, node["memory"]["workingSetBytes"], node["memory"]["time"])])
    family("pod_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the pod in core-seconds",
           [(labels, p["cpu"]["usageCoreNanoSeconds"] / 1e9, p["cpu"]["time"]) for labels, p in pods])
    family("pod_memory_working_set_bytes", "gauge", "Current working set of the pod in bytes",
           [(labels, p["memory"]["workingSetBytes"], p["memory"]["time"]) for labels, p in pods])
    family("resource_scrape_error", "gauge", "1 if there was an error while getting container metrics, 0 otherwise",
           [({}, 0, "")])
    return "\n".join(lines) + "\n"


def _seconds(stamp: str) -> float:
    parsed = _parse(stamp)
    return parsed.timestamp() if parsed else 0.0


def _millis(stamp: str) -> int:
    return int(_seconds(stamp) * 1000)
