"""What allocated ResourceClaims hold: the input an allocation must not contradict.

From every claim with `status.allocation` (informer ones and those the plugin assumed in flight):
devices allocated exclusively, and for devices that allow multiple allocations the capacity each
share consumes, summed per device. Results with adminAccess hold nothing (admin access never
blocks others). Counters consumed by partitionable devices follow from these devices and the
inventory, so `allocator.py` derives them per pool. Built by the DynamicResources plugin.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterable

from scheduler.dra import quantities
from scheduler.dra.devices import DeviceID, qualify


class AllocatedState:
    """`devices`: exclusively allocated device IDs; `capacity`: per shared device, the consumed
    amount per fully-qualified capacity name; `shares`: how many shares each shared device has;
    `pool_changes`: per (driver, pool), how often a device of it joined or left `devices`."""

    __slots__ = ("devices", "capacity", "shares", "pool_changes", "_holders")

    def __init__(self) -> None:
        self.devices: set[DeviceID] = set()
        # How many counted claims hold each exclusive device. Two can at once: the in-flight copy
        # of an extended-resource claim (keyed by its template's uid) and the real claim PreBind
        # created, until the in-flight one is dropped; that drop must not free the device.
        self._holders: dict[DeviceID, int] = {}
        self.capacity: dict[DeviceID, dict[str, Decimal]] = {}
        self.shares: dict[DeviceID, int] = {}
        # Lets `node_devices.py` keep a node's free devices across cycles: the list is stale only
        # once a device of one of the node's pools was taken or given back.
        self.pool_changes: dict[tuple[str, str], int] = {}

    @classmethod
    def of(cls, claims: Iterable[dict[str, Any]]) -> "AllocatedState":
        state = cls()
        for claim in claims:
            state.add(claim)
        return state

    def add(self, claim: dict[str, Any]) -> None:
        """Count one claim's allocation in (a claim the plugin just assumed, for example)."""
        for result in _results(claim):
            if result.get("adminAccess"):
                continue
            device_id = (result.get("driver", ""), result.get("pool", ""), result.get("device", ""))
            if result.get("shareID"):
                held = self.capacity.setdefault(device_id, {})
                for name, value in (result.get("consumedCapacity") or {}).items():
                    key = qualify(name, device_id[0])
                    held[key] = held.get(key, Decimal(0)) + quantities.parse(value)
                self.shares[device_id] = self.shares.get(device_id, 0) + 1
            else:
                if device_id not in self.devices:
                    self.devices.add(device_id)
                    self._changed(device_id)
                self._holders[device_id] = self._holders.get(device_id, 0) + 1

    def remove(self, claim: dict[str, Any]) -> None:
        """Take one claim's allocation out again (an assumed claim that was unreserved)."""
        for result in _results(claim):
            if result.get("adminAccess"):
                continue
            device_id = (result.get("driver", ""), result.get("pool", ""), result.get("device", ""))
            if result.get("shareID"):
                held = self.capacity.get(device_id)
                if held is None:
                    continue
                for name, value in (result.get("consumedCapacity") or {}).items():
                    key = qualify(name, device_id[0])
                    held[key] = held.get(key, Decimal(0)) - quantities.parse(value)
                self.shares[device_id] -= 1
                if self.shares[device_id] <= 0:
                    del self.shares[device_id]
                    del self.capacity[device_id]
            else:
                left = self._holders.get(device_id, 0) - 1
                if left > 0:
                    self._holders[device_id] = left
                else:
                    self._holders.pop(device_id, None)
                    if device_id in self.devices:
                        self.devices.discard(device_id)
                        self._changed(device_id)

    def _changed(self, device_id: DeviceID) -> None:
        pool = (device_id[0], device_id[1])
        self.pool_changes[pool] = self.pool_changes.get(pool, 0) + 1

    def in_use(self, device_id: DeviceID) -> bool:
        """Allocated at all, exclusively or as a share (such a device consumes its counters)."""
        return device_id in self.devices or device_id in self.capacity


def _results(claim: dict[str, Any]) -> list[dict[str, Any]]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return ((allocation.get("devices") or {}).get("results")) or []
