"""Quantities and a pod's resource requests, as the kubelet's admission counts them.

`parse(q)` reads a Kubernetes quantity ("500m", "64Gi", "1e3") exactly, as a Fraction;
`milli(q)` and `whole(q)` round up as the scheduler's `MilliValue()` and `Value()` do.
`pod_requests(pod)` is upstream's `PodRequests`: pod-level requests when set, else the regular
containers plus sidecars (restartable init containers), or the largest init container plus the
sidecars started before it if that is more, plus the RuntimeClass overhead. `admission.py` uses it.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1, "k": 10**3,
            "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$")


def parse(quantity: Any) -> Fraction:
    text = str(quantity).strip()
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(f"quantities must match the regular expression: {text!r}")
    number, exponent, suffix = match.groups()
    value = Fraction(number)
    if exponent:
        return value * Fraction(10) ** int(exponent[1:])
    return value * (_BINARY.get(suffix or "") or _DECIMAL[suffix or ""])


def milli(quantity: Any) -> int:
    return math.ceil(parse(quantity) * 1000)


def whole(quantity: Any) -> int:
    return math.ceil(parse(quantity))


def amount(name: str, quantity: Any) -> int:
    """cpu in millicores, everything else in whole units (bytes, pods, devices)."""
    return milli(quantity) if name == "cpu" else whole(quantity)


def _add(total: dict[str, int], requests: dict[str, Any] | None) -> None:
    for name, quantity in (requests or {}).items():
        total[name] = total.get(name, 0) + amount(name, quantity)


def _requests(container: dict[str, Any]) -> dict[str, Any]:
    return ((container.get("resources") or {}).get("requests")) or {}


def pod_requests(pod: dict[str, Any]) -> dict[str, int]:
    spec = pod.get("spec") or {}
    pod_level = ((spec.get("resources") or {}).get("requests")) or {}
    total: dict[str, int] = {}
    for container in spec.get("containers") or []:
        _add(total, _requests(container))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in spec.get("initContainers") or []:
        if container.get("restartPolicy") == "Always":
            _add(total, _requests(container))
            _add(sidecars, _requests(container))
        else:
            during = dict(sidecars)
            _add(during, _requests(container))
            for name, value in during.items():
                init_peak[name] = max(init_peak.get(name, 0), value)
    for name, value in init_peak.items():
        total[name] = max(total.get(name, 0), value)
    if pod_level:
        # Pod-level resources (KEP-2837) replace the containers' sum for what they name.
        for name, quantity in pod_level.items():
            total[name] = amount(name, quantity)
    _add(total, spec.get("overhead"))
    return total
