"""One published device as the allocator reads it, built once when its ResourceSlice arrives.

A `Device` keeps the raw entry (results copy names and binding fields from it) and, parsed up
front, what every allocation attempt needs: fully-qualified attributes for constraints, capacity
as Decimals with its request policy, counter consumption, taints, its own node selection
(perDeviceNodeSelection) and, built on first use, the CEL `device` value. Selector results are
remembered on the Device itself (`matches`), so replacing a slice drops them with it.
Built by `inventory.py`; read by `selectors.py`, `capacity.py` and `allocator.py`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from admission import cel
from admission.cel.library import semver
from scheduler.dra import quantities

DeviceID = tuple[str, str, str]  # (driver, pool, device)

_SCALARS = ("int", "bool", "string", "version")
_LISTS = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}


def qualify(name: str, driver: str) -> str:
    """A QualifiedName in its fully-qualified form: a bare identifier is in the driver's domain."""
    return name if "/" in name else f"{driver}/{name}"


def device_id_text(device_id: DeviceID) -> str:
    return "/".join(device_id)


class Capacity:
    """One capacity entry: its total, its request policy, and the name the device publishes it under."""

    __slots__ = ("name", "value", "default", "valid_values", "minimum", "maximum", "step", "binary")

    def __init__(self, name: str, raw: dict[str, Any]):
        self.name = name
        self.value = quantities.parse(raw.get("value", "0"))
        self.binary = quantities.is_binary(str(raw.get("value", "0")))
        policy = raw.get("requestPolicy") or None
        self.default: Decimal | None = None
        self.valid_values: list[Decimal] | None = None
        self.minimum: Decimal | None = None
        self.maximum: Decimal | None = None
        self.step: Decimal | None = None
        if policy is not None:
            if policy.get("default") is not None:
                self.default = quantities.parse(policy["default"])
            if policy.get("validValues"):
                self.valid_values = [quantities.parse(v) for v in policy["validValues"]]
            valid_range = policy.get("validRange")
            if valid_range and valid_range.get("min") is not None:
                self.minimum = quantities.parse(valid_range["min"])
                if valid_range.get("max") is not None:
                    self.maximum = quantities.parse(valid_range["max"])
                if valid_range.get("step") is not None:
                    self.step = quantities.parse(valid_range["step"])
                    self.binary = quantities.is_binary(str(valid_range["step"]))

    @property
    def has_policy(self) -> bool:
        return (self.default is not None or self.valid_values is not None or self.minimum is not None)


class Device:
    """A device of one slice. `matches` maps selector expressions to True, False or an error text."""

    __slots__ = ("id", "name", "raw", "slice", "attributes", "capacity", "consumes", "taints",
                 "allow_multiple", "binding_conditions", "binding_failure_conditions", "binds_to_node",
                 "node_name", "node_selector", "all_nodes", "matches", "_cel", "_cel_domains")

    def __init__(self, raw: dict[str, Any], driver: str, pool: str, slice_entry: Any):
        self.raw = raw
        self.name: str = raw.get("name", "")
        self.id: DeviceID = (driver, pool, self.name)
        self.slice = slice_entry
        self.attributes: dict[str, tuple[str, Any]] = {}
        for name, value in (raw.get("attributes") or {}).items():
            for kind in (*_SCALARS, *_LISTS):
                if kind in (value or {}):
                    self.attributes[qualify(name, driver)] = (kind, value[kind])
                    break
        # Keyed by the fully-qualified name; a name the driver spells both ways keeps the
        # explicitly qualified entry (upstream's resolveDeviceCapacity).
        self.capacity: dict[str, Capacity] = {}
        raw_capacity = raw.get("capacity") or {}
        for name, value in raw_capacity.items():
            if "/" not in name and f"{driver}/{name}" in raw_capacity:
                continue
            self.capacity[qualify(name, driver)] = Capacity(name, value or {})
        self.consumes: list[tuple[str, dict[str, Decimal]]] = [
            (entry.get("counterSet", ""),
             {name: quantities.parse((c or {}).get("value", "0")) for name, c in (entry.get("counters") or {}).items()})
            for entry in raw.get("consumesCounters") or []]
        self.taints: list[dict[str, Any]] = list(raw.get("taints") or [])
        self.allow_multiple = bool(raw.get("allowMultipleAllocations"))
        self.binding_conditions: list[str] = list(raw.get("bindingConditions") or [])
        self.binding_failure_conditions: list[str] = list(raw.get("bindingFailureConditions") or [])
        self.binds_to_node = bool(raw.get("bindsToNode"))
        self.node_name: str = raw.get("nodeName") or ""
        self.node_selector: dict[str, Any] | None = raw.get("nodeSelector")
        self.all_nodes = bool(raw.get("allNodes"))
        # expression -> True, False or its error text; a request's selection key -> all pass
        self.matches: dict[Any, bool | str] = {}
        self._cel: dict[str, Any] | None = None
        self._cel_domains: dict[frozenset[str], dict[str, Any]] = {}

    def attribute(self, fully_qualified: str) -> tuple[str, Any] | None:
        """The attribute for a constraint (FullyQualifiedName), as upstream's lookupAttribute finds it."""
        return self.attributes.get(fully_qualified)

    def cel_value(self, domains: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The CEL `device` variable; `domains` are names an expression may index the maps by,
        each given an empty map when the device has none, as upstream's lookups do."""
        if self._cel is None:
            driver = self.id[0]
            attributes: dict[str, dict[str, Any]] = {}
            for name, value in (self.raw.get("attributes") or {}).items():
                domain, _, ident = qualify(name, driver).rpartition("/")
                attributes.setdefault(domain, {})[ident] = _cel_attribute(value or {})
            capacity: dict[str, dict[str, Any]] = {}
            for name, value in (self.raw.get("capacity") or {}).items():
                domain, _, ident = qualify(name, driver).rpartition("/")
                capacity.setdefault(domain, {})[ident] = cel.quantity(str((value or {}).get("value", "0")))
            self._cel = {"driver": driver, "attributes": attributes, "capacity": capacity,
                         "allowMultipleAllocations": self.allow_multiple}
        if not domains:
            return self._cel
        value = self._cel_domains.get(domains)
        if value is None:
            value = dict(self._cel)
            value["attributes"] = {**{d: {} for d in domains}, **self._cel["attributes"]}
            value["capacity"] = {**{d: {} for d in domains}, **self._cel["capacity"]}
            self._cel_domains[domains] = value
        return value


def _cel_attribute(value: dict[str, Any]) -> Any:
    if "version" in value:
        return semver.parse(value["version"])
    if "versions" in value:
        return [semver.parse(v) for v in value["versions"]]
    for kind in ("int", "bool", "string", "ints", "bools", "strings"):
        if kind in value:
            return value[kind]
    return None
