"""Binding conditions (KEP-5007): is an allocated claim's late-binding device ready for the pod?

A device with `bindingConditions` is allocated like any other, but the pod may go to the node only
when its driver reports each of those condition types True in the claim's `status.devices[]`
(the hollow nodes' NIC does it in `nodes/devices/binding.py`). A True `bindingFailureConditions`
entry means the attach failed; no answer `binding_timeout` after `allocationTimestamp` means it
timed out. PreBind waits on `ready`; Filter sends failed or timed-out claims to PostFilter, which
deallocates them. Messages are upstream's (`isClaimReadyForBinding`, `isPodReadyForBinding`).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable

Obj = dict[str, Any]
DEFAULT_TIMEOUT = 600.0  # upstream's BindingTimeoutDefaultSeconds


class BindingFailed(Exception):
    pass


def _results(claim: Obj) -> list[Obj]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or [])


def has_binding_conditions(claims: Iterable[Obj]) -> bool:
    return any(result.get("bindingConditions") for claim in claims for result in _results(claim))


def _device_status(claim: Obj, result: Obj) -> Obj | None:
    for entry in (claim.get("status") or {}).get("devices") or []:
        if (entry.get("driver"), entry.get("pool"), entry.get("device")) == (
                result.get("driver"), result.get("pool"), result.get("device")):
            return entry
    return None


def _condition(conditions: list[Obj], type_: str) -> Obj | None:
    return next((c for c in conditions if c.get("type") == type_), None)


def ready(claim: Obj) -> bool:
    """Every binding condition True; raises BindingFailed when a failure condition is True."""
    if not (claim.get("status") or {}).get("allocation"):
        return False
    name = (claim.get("metadata") or {}).get("name", "")
    for result in _results(claim):
        if not result.get("bindingConditions"):
            continue
        status = _device_status(claim, result)
        if status is None:
            return False
        conditions = status.get("conditions") or []
        for type_ in result.get("bindingFailureConditions") or []:
            failed = _condition(conditions, type_)
            if failed is not None and failed.get("status") == "True":
                raise BindingFailed(f"claim {name} binding failed: reason={failed.get('reason', '')}, "
                                    f"message={_go_quote(failed.get('message', ''))}")
        for type_ in result["bindingConditions"]:
            cond = _condition(conditions, type_)
            if cond is None or cond.get("status") != "True":
                return False
    return True


def timed_out(claim: Obj, timeout: float, now: datetime | None = None) -> bool:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    stamp = allocation.get("allocationTimestamp")
    if not stamp or not any(r.get("bindingConditions") for r in _results(claim)):
        return False
    started = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return (((now or datetime.now(timezone.utc)) - started).total_seconds()) > timeout


def timestamp(now: datetime | None = None) -> str:
    """metav1.Time on the wire: RFC 3339 in UTC, whole seconds."""
    return (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_duration(value: Any, default: float) -> float:
    """A metav1.Duration from plugin args ("10m0s", "600s", 600) as seconds."""
    if value is None or value == "":
        return default
    if isinstance(value, (int, float)):
        return float(value)
    total, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    text = str(value)
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isdigit() or ch == ".":
            number += ch
            i += 1
            continue
        unit = "ms" if text[i:i + 2] == "ms" else ch
        if unit not in units or not number:
            raise ValueError(f"time: invalid duration {_go_quote(text)}")
        total += float(number) * units[unit]
        number = ""
        i += len(unit)
    if number:
        raise ValueError(f"time: missing unit in duration {_go_quote(text)}")
    return total


def _go_quote(text: str) -> str:
    """Go's %q for the plain strings conditions carry."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
