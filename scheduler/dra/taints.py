"""Device taints and tolerations (KEP-5055): which taints a device has and whether a request tolerates them.

A device's taints are those its slice publishes plus those of every DeviceTaintRule whose
`deviceSelector` (driver, pool, device; unset fields match all, no selector matches nothing)
names it. Only NoSchedule and NoExecute keep a request off a device; None and unknown effects do
not. A toleration matches as in core/v1: empty effect matches all effects, empty key with Exists
matches all keys, the operator defaults to Equal. Called by `allocator.py`.
"""

from __future__ import annotations

from typing import Any

from scheduler.dra.devices import Device

BLOCKING = ("NoSchedule", "NoExecute")


def tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


class Rules:
    """DeviceTaintRules, indexed so a device's extra taints are found without scanning every rule."""

    def __init__(self, rules: list[dict[str, Any]]):
        self._rules: list[tuple[str, str, str, dict[str, Any]]] = []
        for rule in rules:
            spec = rule.get("spec") or {}
            selector = spec.get("deviceSelector")
            taint = spec.get("taint")
            if selector is None or not taint:
                continue
            self._rules.append((selector.get("driver") or "", selector.get("pool") or "",
                                selector.get("device") or "", taint))

    def __bool__(self) -> bool:
        return bool(self._rules)

    def taints_for(self, device: Device) -> list[dict[str, Any]]:
        driver, pool, name = device.id
        return [taint for d, p, n, taint in self._rules
                if (not d or d == driver) and (not p or p == pool) and (not n or n == name)]


def blocked(taints: list[dict[str, Any]], tolerations: list[dict[str, Any]]) -> bool:
    """Whether some NoSchedule/NoExecute taint is not tolerated."""
    for taint in taints:
        if taint.get("effect") in BLOCKING and not any(tolerates(t, taint) for t in tolerations):
            return True
    return False
