"""Extended resources backed by DRA (KEP-5004): which DeviceClass serves a name, and how many
of its devices a node has, for resource scoring.

`device_class_mapping` is upstream's extended.DeviceClassMapping (Fit's Filter skips mapped names
a node does not advertise). `ExtendedResourceDevices` is calculateDRAExtendedResourceAllocatableRequest:
Fit and BalancedAllocation score such a resource as (devices the class selects on the node, how
many are allocated), built once per PreScore from the informer stores, only for pods asking for
one; matching reuses the DRA allocator's inventory and CEL selectors (`scheduler/dra`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from client import resources as kinds
from scheduler.dra import node_selection
from scheduler.dra import selectors as dra_selectors
from scheduler.dra.allocated import AllocatedState
from scheduler.dra.devices import Device
from scheduler.dra.inventory import Inventory
from scheduler.framework.interfaces import Handle

Obj = dict[str, Any]
IMPLICIT_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")  # a qualified name's name part


def device_class_mapping(classes: Iterable[Obj]) -> dict[str, str]:
    """Extended-resource name -> DeviceClass name. Every class answers to its implicit name; for an
    `extendedResourceName` two classes share, the newer class wins, then the first name."""
    mapping: dict[str, str] = {}
    claimed: dict[str, tuple[str, str]] = {}  # explicit name -> (creationTimestamp, class name)
    for cls in classes:
        meta = cls.get("metadata") or {}
        class_name = meta.get("name") or ""
        if len(class_name) <= 63 and _NAME_PART.match(class_name):  # only when that is a valid resource name
            mapping.setdefault(IMPLICIT_CLASS_PREFIX + class_name, class_name)
        explicit = (cls.get("spec") or {}).get("extendedResourceName")
        if not explicit:
            continue
        created = meta.get("creationTimestamp") or ""
        held = claimed.get(explicit)
        if held is None or created > held[0] or (created == held[0] and class_name < held[1]):
            claimed[explicit] = (created, class_name)
    mapping.update({name: cls_name for name, (_, cls_name) in claimed.items()})
    return mapping


def for_scoring(handle: Handle, requested: list[str], enabled: bool) -> "ExtendedResourceDevices | None":
    """The device counts a score needs, when the pod asks for a scored resource a DeviceClass maps."""
    if not enabled or not requested:
        return None
    mapping = device_class_mapping(handle.store(kinds.DEVICECLASSES).list())
    if not any(name in mapping for name in requested):
        return None
    return ExtendedResourceDevices.of(handle, mapping)


@dataclass
class ExtendedResourceDevices:
    inventory: Inventory
    allocated: AllocatedState
    classes: dict[str, Obj]  # DeviceClass name -> object
    mapping: dict[str, str]  # extended resource name -> DeviceClass name

    @classmethod
    def of(cls, handle: Handle, mapping: dict[str, str]) -> "ExtendedResourceDevices":
        inventory = Inventory()
        for entry in handle.store(kinds.RESOURCESLICES).list():
            inventory.upsert(entry)
        classes = {(c.get("metadata") or {}).get("name", ""): c for c in handle.store(kinds.DEVICECLASSES).list()}
        return cls(inventory, AllocatedState.of(handle.store(kinds.RESOURCECLAIMS).list()), classes, mapping)

    def _node_devices(self, node: Obj) -> list[Device]:
        found: list[Device] = []
        for pool in self.inventory.pools_for((node.get("metadata") or {}).get("name", "")):
            for entry in pool.slices:
                if entry.per_device:
                    found += [d for d in entry.devices
                              if node_selection.matches(node, d.node_name, d.all_nodes, d.node_selector)]
                elif node_selection.matches(node, entry.node_name, entry.all_nodes, entry.node_selector):
                    found += entry.devices
        return found

    def totals(self, node: Obj, resource: str) -> tuple[int, int]:
        """(devices the mapped class selects on this node, how many are allocated); (0, 0) if none."""
        class_name = self.mapping.get(resource)
        device_class = self.classes.get(class_name or "")
        if device_class is None:
            return 0, 0
        chosen = [s for s in (device_class.get("spec") or {}).get("selectors") or [] if (s or {}).get("cel")]
        capacity = allocated = 0
        for device in self._node_devices(node):
            try:
                selected = dra_selectors.match(chosen, device, f"class {class_name}")
            except dra_selectors.SelectorError:
                return 0, 0  # upstream gives up on the resource when a class selector cannot be evaluated
            if selected:
                capacity += 1
                allocated += self.allocated.in_use(device.id)
        return capacity, allocated
