"""One kubelet's `/metrics/resource`, fetched and decoded into a `points.Batch`, as metrics-server does.

Fetch over HTTPS (the node's address and port as `subresources/kubelet.kubelet_of` finds them),
unverified, with the API server's own token, within a timeout. Decode as `decodeBatch`: the
node_/container_ cpu and memory families and container_start_time_seconds, each sample at its own
millisecond timestamp; a node or pod missing a counter or a working set is dropped. For `collector.py`.
"""

from __future__ import annotations

import re
import time

import aiohttp

from apiserver.metrics_api.points import Batch, Point, PodKey
from apiserver.subresources import kubelet

PATH = "/metrics/resource"
_SERIES = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
_UNESCAPE = re.compile(r"\\(.)")


class ScrapeError(Exception):
    pass


def _labels(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    return {k: _UNESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), v) for k, v in _LABEL.findall(text)}


def decode(text: str, scraped_at: float) -> Batch:
    node = {"start": 0, "timestamp": 0, "cpu": 0, "memory": 0}
    containers: dict[PodKey, dict[str, dict[str, int]]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SERIES.match(line)
        if match is None:
            raise ScrapeError(f"failed parsing metrics: {line[:80]!r}")
        name, raw_labels, raw_value, raw_stamp = match.groups()
        try:
            value = float(raw_value)
        except ValueError:
            raise ScrapeError(f"failed parsing metrics: bad value {raw_value!r}") from None
        stamp = int(raw_stamp) if raw_stamp else round(scraped_at * 1000)
        if name == "node_cpu_usage_seconds_total":
            node["cpu"], node["timestamp"] = round(value * 1e9), stamp
        elif name == "node_memory_working_set_bytes":
            node["memory"], node["timestamp"] = int(value), stamp
        elif name in ("container_cpu_usage_seconds_total", "container_memory_working_set_bytes",
                      "container_start_time_seconds"):
            labels = _labels(raw_labels)
            entry = containers.setdefault((labels.get("namespace", ""), labels.get("pod", "")), {}).setdefault(
                labels.get("container", ""), {"start": 0, "timestamp": 0, "cpu": 0, "memory": 0})
            if name == "container_start_time_seconds":
                entry["start"] = round(value * 1000)  # its timestamp is the start, not the measurement
            elif name == "container_cpu_usage_seconds_total":
                # Rounded, where metrics-server truncates: 0.125 s must not become 124999999 ns.
                entry["cpu"], entry["timestamp"] = round(value * 1e9), stamp
            else:
                entry["memory"], entry["timestamp"] = int(value), stamp
    complete = node["timestamp"] and node["cpu"] and node["memory"]
    batch = Batch(Point(0, node["timestamp"], node["cpu"], node["memory"]) if complete else None)
    for key, by_name in containers.items():
        points = {c: Point(e["start"], e["timestamp"], e["cpu"], e["memory"]) for c, e in by_name.items()
                  if e["timestamp"]}
        # As metrics-server: one container without a counter or a working set drops its pod.
        if points and all(p.cpu and p.memory for p in points.values()):
            batch.pods[key] = points
    return batch


async def scrape(session: aiohttp.ClientSession, target: kubelet.Kubelet, token: str | None,
                 timeout: float) -> Batch:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    scraped_at = time.time()
    try:
        async with session.get(target.url(PATH), headers=headers,
                               timeout=aiohttp.ClientTimeout(total=timeout)) as response:
            body = await response.text()
            if response.status != 200:
                raise ScrapeError(f"request failed, status: {response.status} {body[:200]!r}")
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise ScrapeError(f"{type(exc).__name__}: {exc}") from None
    return decode(body, scraped_at)
