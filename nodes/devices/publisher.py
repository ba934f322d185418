"""Keeps a node's ResourceSlices equal to its devices, as the kubelet plugin's slice controller does.

`publish(rest, node, devices_config)` reconciles each driver's pool (named after the node) with
`slices.desired`, then watches the Node for `haru.dev/gpu-health` and reconciles again on a
change, until cancelled. The rules are k8s.io/dynamic-resource-allocation's resourceslice
controller (v0.36): slices are named `<index, 5+ hex digits>-<driver>-<node>-<random>` and owned by
the Node; an existing slice is matched by its index; the pool generation is bumped unless at
most one slice changes in place; stale slices (older generation, unmatched) are deleted first;
taints keep their `timeAdded`. Restarting with the same devices writes nothing.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import aclosing
from typing import Any

from client import errors
from client.resources import Resource
from client.rest import RestClient
from nodes.devices import health as healthmod
from nodes.devices import inventory as inventorymod
from nodes.devices import names
from nodes.devices import slices as slicesmod
from nodes.devices.config import DevicesConfig

log = logging.getLogger(__name__)

RESOURCE_SLICES = Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", namespaced=False)
NODES = Resource("", "v1", "nodes", "Node", namespaced=False)
INDEX_MIN_LENGTH = 5
RETRY_SECONDS = 1.0


def index_length(count: int) -> int:
    return max(INDEX_MIN_LENGTH, len(format(max(count - 1, 0), "x")))


def decode_index(name: str, length: int) -> int:
    head, sep, _ = name.partition("-")
    if not sep or len(head) != length:
        return -1
    try:
        return int(head, 16)
    except ValueError:
        return -1


def _copy_time_added(desired: list[dict[str, Any]], current: list[dict[str, Any]]) -> None:
    """Keep a taint's timeAdded from the stored device when the same taint is still there."""
    stored = {d.get("name"): d.get("taints") or [] for d in current}
    for device in desired:
        for taint in device.get("taints") or []:
            for old in stored.get(device["name"], []):
                if all(old.get(k) == taint.get(k) for k in ("key", "value", "effect")) and old.get("timeAdded"):
                    taint["timeAdded"] = old["timeAdded"]


async def reconcile_pool(rest: RestClient, node: dict[str, Any], driver: str, bodies: list[dict[str, Any]]) -> int:
    """One pass for one driver's pool; returns the number of writes it made."""
    meta = node["metadata"]
    node_name = meta["name"]
    listed = await rest.list(RESOURCE_SLICES, field_selector=f"spec.nodeName={node_name},spec.driver={driver}")
    existing = [s for s in listed.get("items") or [] if (s.get("spec") or {}).get("pool", {}).get("name") == node_name]
    generation = max((int(s["spec"]["pool"].get("generation") or 0) for s in existing), default=0)
    length = index_length(len(bodies))

    matched: dict[int, dict[str, Any]] = {}
    obsolete: list[dict[str, Any]] = []
    for item in sorted(existing, key=lambda s: s["metadata"]["name"]):
        index = decode_index(item["metadata"]["name"], length)
        if int(item["spec"]["pool"].get("generation") or 0) < generation or not 0 <= index < len(bodies) \
                or index in matched:
            obsolete.append(item)
        else:
            matched[index] = item

    pool = {"name": node_name, "generation": generation, "resourceSliceCount": len(bodies)}
    changed = set()
    for index, item in matched.items():
        spec = item["spec"]
        _copy_time_added(bodies[index].get("devices") or [], spec.get("devices") or [])
        if spec.get("pool") != pool or (spec.get("devices") or None) != (bodies[index].get("devices") or None) \
                or (spec.get("sharedCounters") or None) != (bodies[index].get("sharedCounters") or None):
            changed.add(index)
    new = len(bodies) - len(matched)
    bumped = not (new == 0 and len(changed) <= 1)
    if bumped:
        generation += 1
    pool["generation"] = generation

    writes = 0
    for item in obsolete:
        try:
            await rest.delete(RESOURCE_SLICES, item["metadata"]["name"], uid=item["metadata"].get("uid"))
        except errors.APIError as err:
            if not errors.is_not_found(err):
                raise
        writes += 1
    for index, item in sorted(matched.items()):
        if index not in changed and not bumped:
            continue
        spec = {"driver": driver, "pool": dict(pool), "nodeName": node_name, **bodies[index]}
        await rest.update(RESOURCE_SLICES, {**item, "spec": spec})
        writes += 1
    owner = {"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": meta.get("uid", ""), "controller": True}
    for index in range(len(bodies)):
        if index in matched:
            continue
        body = {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"generateName": f"{index:0{length}x}-{driver}-{node_name}-", "ownerReferences": [owner]},
            "spec": {"driver": driver, "pool": dict(pool), "nodeName": node_name, **bodies[index]},
        }
        await rest.create(RESOURCE_SLICES, body)
        writes += 1
    return writes


async def reconcile(rest: RestClient, node: dict[str, Any], inventory: inventorymod.Inventory,
                    node_health: healthmod.NodeHealth) -> int:
    """Every driver's pool for this node, including drivers that no longer have devices here."""
    wanted = slicesmod.desired(inventory, node_health)
    writes = 0
    for driver in names.DRIVERS:
        bodies = wanted.get(driver, [])
        if bodies:
            writes += await reconcile_pool(rest, node, driver, bodies)
        else:
            writes += await _remove_pool(rest, node["metadata"]["name"], driver)
    return writes


async def _remove_pool(rest: RestClient, node_name: str, driver: str) -> int:
    listed = await rest.list(RESOURCE_SLICES, field_selector=f"spec.nodeName={node_name},spec.driver={driver}")
    count = 0
    for item in listed.get("items") or []:
        try:
            await rest.delete(RESOURCE_SLICES, item["metadata"]["name"])
            count += 1
        except errors.APIError as err:
            if not errors.is_not_found(err):
                raise
    return count


def faults_of(node: dict[str, Any], previous: dict[str, healthmod.Fault]) -> dict[str, healthmod.Fault]:
    text = ((node.get("metadata") or {}).get("annotations") or {}).get(healthmod.ANNOTATION)
    try:
        return healthmod.parse_annotation(text)
    except healthmod.FaultError as err:
        # A malformed annotation changes nothing: the last good faults stay in force.
        log.warning("node %s: ignoring %s: %s", node["metadata"]["name"], healthmod.ANNOTATION, err)
        return previous


async def sync(rest: RestClient, node: dict[str, Any], inventory: inventorymod.Inventory,
               node_health: healthmod.NodeHealth, *, force: bool = False) -> int:
    """One Node event: take its faults, and reconcile when they changed (or when forced).

    For a caller that already watches Nodes through a shared informer (thousands of hollow
    kubelets in one process), this is the handler; `publish` is the same loop on its own watch.
    """
    if node_health.replace(faults_of(node, node_health.faults)) or force:
        return await reconcile(rest, node, inventory, node_health)
    return 0


async def publish(rest: RestClient, node: dict[str, Any], devices_config: DevicesConfig, *,
                  registry: healthmod.HealthRegistry | None = None) -> None:
    """Publish this node's slices and keep them current until cancelled (health changes, lost watches)."""
    name = node["metadata"]["name"]
    node_health = (registry or healthmod.REGISTRY).node(name)
    inventory = inventorymod.build(name, devices_config)
    while True:
        try:
            current = await rest.get(NODES, name)
            await sync(rest, current, inventory, node_health, force=True)
            rv = current["metadata"].get("resourceVersion", "")
            async with aclosing(rest.watch(NODES, field_selector=f"metadata.name={name}", resource_version=rv,
                                           timeout_seconds=300)) as events:
                async for event in events:
                    if event.get("type") not in ("ADDED", "MODIFIED"):
                        continue
                    await sync(rest, event["object"], inventory, node_health)
        except asyncio.CancelledError:
            raise
        except errors.APIError as err:
            # 410 and conflicts are routine (relist); anything else is worth a line in the log.
            if not (errors.is_expired(err) or errors.is_conflict(err)):
                log.warning("node %s: publishing slices failed: %s", name, err)
            await asyncio.sleep(RETRY_SECONDS)
        except Exception:  # a lost connection or a bug: log it, and start over from a fresh GET
            log.exception("node %s: publishing slices failed", name)
            await asyncio.sleep(RETRY_SECONDS)
