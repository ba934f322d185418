"""Which devices of the inventory a node can use, remembered across scheduling cycles.

`NodeDevices.of(inventory, node, partitionable)` walks the pools `Inventory.pools_for` gives the
node and keeps the (pool, device) pairs whose slice (or, with perDeviceNodeSelection, whose
device) selects the node, plus the pools that contributed any. The allocator asks for this once
per node per pod; between pods the answer changes only when a slice does (`Inventory.version`) or
the node object does (its labels feed node selectors), so it is kept per node name and reused
while both are the very ones it was computed from. `free` narrows a view to the devices no claim
holds exclusively, which is all a search for an ordinary request reads: on a busy cluster most
nodes have none left, and the list is redone only when one of the node's pools had a device taken
or given back (`AllocatedState.pool_changes`), not for every pod on every node. The
DynamicResources plugin owns one for its inventory and hands it to each cycle's `Allocator`.
"""

from __future__ import annotations

from typing import Any

from scheduler.dra import node_selection
from scheduler.dra.allocated import AllocatedState
from scheduler.dra.devices import Device
from scheduler.dra.inventory import Inventory, Pool, PoolKey

Entries = list[tuple[Pool, Device]]
NodeView = tuple[Entries, list[Pool]]
_MAX_NODES = 8192  # past this many node names the cache starts over (nodes come and go)


def compute(inventory: Inventory, node: dict[str, Any], partitionable: bool) -> NodeView:
    """The node's (pool, device) pairs in pool, slice and device order, and the pools with any."""
    devices: list[tuple[Pool, Device]] = []
    pools: list[Pool] = []
    node_name = (node.get("metadata") or {}).get("name", "")
    for pool in inventory.pools_for(node_name):
        relevant = False
        for entry in pool.slices:
            if entry.per_device and not (entry.node_name or entry.all_nodes or entry.node_selector):
                if not partitionable:
                    continue
                for device in entry.devices:
                    if node_selection.matches(node, device.node_name, device.all_nodes, device.node_selector):
                        devices.append((pool, device))
                        relevant = True
                continue
            if entry.per_device and not partitionable:
                continue
            if not node_selection.matches(node, entry.node_name, entry.all_nodes, entry.node_selector):
                continue
            relevant = True
            devices.extend((pool, device) for device in entry.devices)
        if relevant:
            pools.append(pool)
    return devices, pools


class NodeDevices:
    """`compute` per node, kept while the inventory version and the node object stay the same."""

    def __init__(self) -> None:
        # node name -> (inventory, its version, the node object, partitionable, the view)
        self._views: dict[str, tuple[Inventory, int, dict[str, Any], bool, NodeView]] = {}
        # node name -> (the view's entries, the allocated state, the view's pool keys, their
        # changes then, free entries)
        self._free: dict[str, tuple[Entries, AllocatedState, list[PoolKey], tuple[int | None, ...], Entries]] = {}

    def of(self, inventory: Inventory, node: dict[str, Any], partitionable: bool) -> NodeView:
        name = (node.get("metadata") or {}).get("name", "")
        cached = self._views.get(name)
        if (cached is not None and cached[0] is inventory and cached[1] == inventory.version
                and cached[2] is node and cached[3] == partitionable):
            return cached[4]
        view = compute(inventory, node, partitionable)
        if len(self._views) >= _MAX_NODES and name not in self._views:
            self._views.clear()
            self._free.clear()
        self._views[name] = (inventory, inventory.version, node, partitionable, view)
        return view

    def free(self, node_name: str, view: NodeView, allocated: AllocatedState) -> Entries:
        """The entries of `view` (this node's, from `of`) whose device `allocated` does not hold."""
        entries, pools = view
        changes = allocated.pool_changes.get
        cached = self._free.get(node_name)
        if cached is not None and cached[0] is entries and cached[1] is allocated:
            keys = cached[2]
            stamp = tuple(map(changes, keys))
            if stamp == cached[3]:
                return cached[4]
        else:
            keys = [pool.key for pool in pools]
            stamp = tuple(map(changes, keys))
        held = allocated.devices
        free = [entry for entry in entries if entry[1].id not in held] if held else entries
        self._free[node_name] = (entries, allocated, keys, stamp, free)
        return free
