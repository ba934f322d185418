"""Consumable capacity (KEP-5075): how much of a device a request takes, and whether it still fits.

A request names capacities (bare names are in the device driver's domain). Per capacity entry of
the device the consumed amount is: the request rounded by the entry's requestPolicy (validRange:
up to min, then to min + n·step; validValues: the smallest value not below it), or, when the
request does not name it, the policy's default or else the whole entry. The amount must obey the
policy (not above max, on a step, one of validValues) and, added to what allocated claims and
this attempt already consume, stay within the entry's value. A request naming a capacity the
device lacks skips the device. Called by `allocator.py`; amounts go into `consumedCapacity`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from scheduler.dra import quantities
from scheduler.dra.devices import Capacity, Device, qualify

Requests = dict[str, Decimal]  # fully-qualified capacity name -> requested amount


class CapacityError(Exception):
    """A request the allocator refuses outright (upstream aborts rather than skipping the device)."""


def parse_requests(capacity: dict[str, Any] | None) -> dict[str, Decimal]:
    """`capacity.requests` of a request, parsed, keyed as written."""
    return {name: quantities.parse(value) for name, value in ((capacity or {}).get("requests") or {}).items()}


def resolve(requests: dict[str, Decimal], device: Device) -> Requests | None:
    """The requests keyed by the device's fully-qualified capacity names, or None when the device
    has no such capacity. Raises CapacityError when one capacity is asked for under both spellings."""
    if not requests:
        return {}
    driver = device.id[0]
    resolved: Requests = {}
    for name, value in requests.items():
        key = qualify(name, driver)
        if key not in device.capacity:
            return None
        if key in resolved:
            ident = key.rpartition("/")[2]
            other = key if name != key else ident
            raise CapacityError(f'capacity "{ident}" requested both as "{name}" and as "{other}"')
        resolved[key] = value
    return resolved


def consumed_amount(requested: Decimal | None, entry: Capacity) -> Decimal:
    if requested is None:
        return entry.default if entry.default is not None else entry.value
    if entry.minimum is not None:
        if requested < entry.minimum:
            return entry.minimum
        if entry.step is None or entry.step <= 0:
            return requested
        steps = (requested - entry.minimum) / entry.step
        whole = steps.to_integral_value(rounding="ROUND_CEILING")
        return entry.minimum + whole * entry.step
    if entry.valid_values is not None:
        for valid in entry.valid_values:
            if requested <= valid:
                return valid
    return requested


def violates(amount: Decimal, entry: Capacity) -> bool:
    if not entry.has_policy:
        return False
    if entry.default is not None and amount == entry.default:
        return False
    if entry.minimum is not None:
        if entry.maximum is not None and amount > entry.maximum:
            return True
        if entry.step is not None and entry.step > 0 and (amount - entry.minimum) % entry.step != 0:
            return True
        return False
    if entry.valid_values is not None:
        return amount not in entry.valid_values
    return False


def fits(device: Device, requests: Requests, held: dict[str, Decimal] | None,
         allocating: dict[str, Decimal] | None) -> dict[str, Decimal] | None:
    """What the request would consume per capacity, or None when it does not fit: `held` is what
    allocated claims consume on the device, `allocating` what this attempt already took."""
    amounts: dict[str, Decimal] = {}
    for key, entry in device.capacity.items():
        amount = consumed_amount(requests.get(key), entry)
        if amount < 0:
            raise CapacityError(f'capacity "{key}": capacity value is negative')
        if violates(amount, entry):
            return None
        total = amount
        if held:
            total += held.get(key, 0)
        if allocating:
            total += allocating.get(key, 0)
        if total > entry.value:
            return None
        amounts[key] = amount
    return amounts


def status_form(device: Device, amounts: dict[str, Decimal]) -> dict[str, str]:
    """`consumedCapacity` of a result: every capacity of the device under its published name."""
    return {device.capacity[key].name: quantities.text(value, device.capacity[key].binary)
            for key, value in sorted(amounts.items())}
