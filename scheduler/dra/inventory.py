"""The ResourceSlices the scheduler knows, by pool, kept across scheduling cycles.

The DynamicResources plugin feeds it informer events (`upsert`, `remove`). A pool is named by
(driver, pool name); only its slices of the newest `pool.generation` count, and the pool is
complete once it holds `resourceSliceCount` of them (upstream's GatherPools). Pools are indexed
by the node their slices name and by driver; slices that use nodeSelector, allNodes or
perDeviceNodeSelection are "shared" and looked at for every node. Each slice's devices are parsed
once (`devices.Device`) and carry their CEL results, so a changed slice drops them.
`allocator.py` asks `pools_for(node_name)`.
"""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Any

from scheduler.dra import quantities
from scheduler.dra.devices import Device

PoolKey = tuple[str, str]  # (driver, pool name)
_tokens = itertools.count(1)


class Slice:
    """One ResourceSlice, parsed. `token` changes whenever the slice is replaced."""

    __slots__ = ("name", "resource_version", "obj", "driver", "pool", "generation", "count", "node_name",
                 "node_selector", "all_nodes", "per_device", "devices", "counter_sets", "token")

    def __init__(self, obj: dict[str, Any]):
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        pool = spec.get("pool") or {}
        self.obj = obj
        self.name: str = meta.get("name", "")
        self.resource_version: str = meta.get("resourceVersion", "")
        self.driver: str = spec.get("driver", "")
        self.pool: str = pool.get("name", "")
        self.generation = int(pool.get("generation") or 0)
        self.count = int(pool.get("resourceSliceCount") or 0)
        self.node_name: str = spec.get("nodeName") or ""
        self.node_selector: dict[str, Any] | None = spec.get("nodeSelector")
        self.all_nodes = bool(spec.get("allNodes"))
        self.per_device = bool(spec.get("perDeviceNodeSelection"))
        self.token = next(_tokens)
        self.devices = [Device(raw, self.driver, self.pool, self) for raw in spec.get("devices") or []]
        self.counter_sets: dict[str, dict[str, Decimal]] = {
            entry.get("name", ""): {name: quantities.parse((c or {}).get("value", "0"))
                                    for name, c in (entry.get("counters") or {}).items()}
            for entry in spec.get("sharedCounters") or []}

    @property
    def pool_key(self) -> PoolKey:
        return (self.driver, self.pool)


class Pool:
    """The newest generation of one pool: its slices (ordered by name), completeness, validity."""

    __slots__ = ("key", "generation", "slices", "complete", "invalid", "counter_sets", "devices_by_name")

    def __init__(self, key: PoolKey, all_slices: list[Slice]):
        self.key = key
        self.generation = max(s.generation for s in all_slices)
        self.slices = sorted((s for s in all_slices if s.generation == self.generation), key=lambda s: s.name)
        self.complete = len(self.slices) == self.slices[0].count
        self.invalid = ""
        self.devices_by_name: dict[str, Device] = {}
        for entry in self.slices:
            for device in entry.devices:
                if device.name in self.devices_by_name and not self.invalid:
                    self.invalid = f"duplicate device name {device.name}"
                self.devices_by_name[device.name] = device
        self.counter_sets: dict[str, dict[str, Decimal]] = {}
        for entry in self.slices:
            self.counter_sets.update(entry.counter_sets)

    @property
    def id_text(self) -> str:
        return f"{self.key[0]}/{self.key[1]}"


class Inventory:
    """Every ResourceSlice by name and by pool; pools by node name and by driver."""

    def __init__(self) -> None:
        self._slices: dict[str, Slice] = {}
        self._pool_slices: dict[PoolKey, dict[str, Slice]] = {}
        self._pools: dict[PoolKey, Pool] = {}  # built on demand, dropped when a slice changes
        self._by_node: dict[str, set[PoolKey]] = {}
        self._by_driver: dict[str, set[PoolKey]] = {}
        self._shared: dict[PoolKey, int] = {}  # pool -> number of its slices that are not node-local
        self._for_node: dict[str, tuple[int, list[Pool]]] = {}
        self.version = 0  # bumped on every change; callers may key caches by it

    def upsert(self, obj: dict[str, Any]) -> None:
        """Add or replace a slice (informer add/update). A resync of an unchanged object keeps its
        parsed devices and their CEL results."""
        name = (obj.get("metadata") or {}).get("name", "")
        old = self._slices.get(name)
        rv = (obj.get("metadata") or {}).get("resourceVersion", "")
        if old is not None and rv and old.resource_version == rv:
            return
        if old is not None:
            self._unlink(old)
        entry = Slice(obj)
        self._slices[name] = entry
        key = entry.pool_key
        self._pool_slices.setdefault(key, {})[name] = entry
        if entry.node_name:
            self._by_node.setdefault(entry.node_name, set()).add(key)
        else:
            self._shared[key] = self._shared.get(key, 0) + 1
        self._by_driver.setdefault(entry.driver, set()).add(key)
        self._changed(key)

    def remove(self, obj: dict[str, Any]) -> None:
        """Forget a slice (informer delete, also a DeletedFinalStateUnknown's object)."""
        old = self._slices.get((obj.get("metadata") or {}).get("name", ""))
        if old is not None:
            self._unlink(old)
            self._changed(old.pool_key)

    def _unlink(self, entry: Slice) -> None:
        del self._slices[entry.name]
        key = entry.pool_key
        members = self._pool_slices[key]
        del members[entry.name]
        if entry.node_name and not any(s.node_name == entry.node_name for s in members.values()):
            self._by_node[entry.node_name].discard(key)
            if not self._by_node[entry.node_name]:
                del self._by_node[entry.node_name]
        if not entry.node_name:
            self._shared[key] -= 1
            if not self._shared[key]:
                del self._shared[key]
        if not any(s.driver == entry.driver for s in members.values()):
            self._by_driver[entry.driver].discard(key)
        if not members:
            del self._pool_slices[key]

    def _changed(self, key: PoolKey) -> None:
        self._pools.pop(key, None)
        self.version += 1

    def pool(self, key: PoolKey) -> Pool | None:
        """The newest generation of a pool, or None when it has no slices."""
        pool = self._pools.get(key)
        if pool is None:
            members = self._pool_slices.get(key)
            if not members:
                return None
            pool = self._pools[key] = Pool(key, list(members.values()))
        return pool

    def pools_for(self, node_name: str) -> list[Pool]:
        """Pools that may have devices for this node, ordered by (driver, pool): those with slices
        naming the node and all shared ones. Node selectors are checked by the caller."""
        cached = self._for_node.get(node_name)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        keys = set(self._by_node.get(node_name, ())) | set(self._shared)
        pools = [p for p in (self.pool(k) for k in sorted(keys)) if p is not None]
        if len(self._for_node) > 8192:
            self._for_node.clear()
        self._for_node[node_name] = (self.version, pools)
        return pools

    def pools_of_driver(self, driver: str) -> list[Pool]:
        return [p for p in (self.pool(k) for k in sorted(self._by_driver.get(driver, ()))) if p is not None]

    def slices(self) -> list[Slice]:
        return list(self._slices.values())

    def __len__(self) -> int:
        return len(self._slices)
