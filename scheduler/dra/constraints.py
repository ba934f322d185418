"""Claim constraints across the devices of a claim: matchAttribute and distinctAttribute.

A constraint applies to the requests it names (a bare request name covers its subrequests;
`<request>/<subrequest>` names one), or to all when it names none. matchAttribute wants every
device to carry the attribute with one type and value; distinctAttribute wants the values all
different. A device without the attribute never satisfies either. List attributes (alpha) use
set semantics: match means a common element, distinct means disjoint. Devices are added and
removed in stack order by the search in `allocator.py`, so each constraint keeps a stack.
"""

from __future__ import annotations

from typing import Any

from scheduler.dra.devices import Device

_BASE = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}


def _as_set(value: tuple[str, Any]) -> frozenset[tuple[str, Any]]:
    kind, raw = value
    if kind in _BASE:
        return frozenset((_BASE[kind], v) for v in raw or [])
    return frozenset({(kind, raw)})


class Constraint:
    """One entry of `spec.devices.constraints`."""

    __slots__ = ("requests", "attribute", "distinct", "_stack")

    def __init__(self, spec: dict[str, Any]):
        self.requests = frozenset(spec.get("requests") or [])
        if spec.get("matchAttribute") is not None:
            self.attribute, self.distinct = spec["matchAttribute"], False
        else:
            self.attribute, self.distinct = spec.get("distinctAttribute") or "", True
        self._stack: list[frozenset[tuple[str, Any]] | None] = []

    def applies(self, request: str, subrequest: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(subrequest) and f"{request}/{subrequest}" in self.requests)

    def add(self, request: str, subrequest: str, device: Device) -> bool:
        """Whether the device may join; when it may, it is counted until `remove`."""
        if not self.applies(request, subrequest):
            self._stack.append(None)
            return True
        value = device.attribute(self.attribute)
        if value is None:
            return False
        values = _as_set(value)
        held = [v for v in self._stack if v is not None]
        if self.distinct:
            if any(values & other for other in held):
                return False
        elif held:
            common = values
            for other in held:
                common = common & other
            if not common:
                return False
        self._stack.append(values)
        return True

    def remove(self) -> None:
        self._stack.pop()
