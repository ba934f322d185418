"""The one seam between a hollow kubelet and its DRA driver (`nodes/devices/`, built separately).

The kubelet calls `start_driver(...)` once it has registered its Node. That calls
`nodes.devices.publish(client=, node=, devices=)`, where `node` is the registered Node object and
`devices` the pool's opaque `devices` mapping. `publish` returns a driver object or None. The
driver may have:
- `container_env(pod, container, claims) -> dict[str, str]`: extra env for a starting container
  (`NVIDIA_VISIBLE_DEVICES`, `CUDA_VISIBLE_DEVICES`); `claims` maps each pod claim name to its
  ResourceClaim.
- `allocated_resources_status(pod, container, claims) -> list | None`: the container's
  `allocatedResourcesStatus`.
- `health.listeners`: callbacks run when a device's health changes (`on_health_change`).
- `async stop()`.
Without `nodes/devices/` (or for a node with no devices) the kubelet runs without a driver.
Before anything starts, `check_devices(raw)` asks the driver's own parser
(`nodes.devices.config.parse`) what is wrong with a pool's mapping, so a cluster file is refused
at once with the line.
"""

from __future__ import annotations

import importlib
import inspect
import logging
from typing import Any

log = logging.getLogger("haru.nodes.devices")


def check_devices(raw: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """(path below `devices`, message) for each problem the driver sees; [] when it has none or is absent."""
    try:
        config = importlib.import_module("nodes.devices.config")
    except ModuleNotFoundError as exc:
        if exc.name not in ("nodes.devices", "nodes.devices.config"):
            raise
        return []
    try:
        config.parse(raw)
    except config.DevicesConfigError as exc:
        return list(exc.errors)
    return []


async def start_driver(client: Any, node: dict[str, Any], devices: dict[str, Any]) -> Any:
    if not devices:
        return None
    try:
        module = importlib.import_module("nodes.devices")
    except ModuleNotFoundError as exc:
        if exc.name not in ("nodes.devices",):
            raise
        log.info("no DRA driver package (nodes.devices); node %s publishes no devices", node["metadata"]["name"])
        return None
    result = module.publish(client=client, node=node, devices=devices)
    return await result if inspect.isawaitable(result) else result


def container_env(driver: Any, pod: dict[str, Any], container: dict[str, Any], claims: dict[str, Any]) -> dict[str, str]:
    hook = getattr(driver, "container_env", None)
    return dict(hook(pod, container, claims) or {}) if hook is not None else {}


def resources_status(driver: Any, pod: dict[str, Any], container: dict[str, Any],
                     claims: dict[str, Any]) -> list[dict[str, Any]] | None:
    hook = getattr(driver, "allocated_resources_status", None)
    return hook(pod, container, claims) if hook is not None else None


def on_health_change(driver: Any, callback: Any) -> None:
    """Call `callback()` whenever the driver's devices change health (pods' status must be rendered again)."""
    listeners = getattr(getattr(driver, "health", None), "listeners", None)
    if listeners is not None:
        listeners.append(callback)


async def stop_driver(driver: Any) -> None:
    listeners = getattr(getattr(driver, "health", None), "listeners", None)
    if listeners is not None:
        listeners.clear()  # the node's health entry outlives this kubelet in the process registry
    stop = getattr(driver, "stop", None)
    if stop is not None:
        result = stop()
        if inspect.isawaitable(result):
            await result
