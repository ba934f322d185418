"""Resource vectors and a pod's effective requests, as the scheduler counts them.

`Resource` holds milli-CPU, bytes of memory and ephemeral storage, a pod count, and every other
(extended or hugepages) resource as an integer, the way upstream's `framework.Resource` does.
`pod_requests(pod)` follows upstream's rules: the sum of the app containers and the restartable
(sidecar) init containers, at least the largest ordinary init container with the sidecars started
before it, plus `spec.overhead`; pod-level `spec.resources` wins where set. `non_zero=True` gives
the defaults upstream scores with for containers that request nothing (100m CPU, 200Mi).
Used by `node_info`, the resource plugins, preemption and the DRA extended-resource mapping.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

DEFAULT_MILLI_CPU_REQUEST = 100  # upstream's schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest

_SUFFIXES = {
    "": 1, "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+)?(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")


def parse_quantity(value: Any) -> Fraction:
    """A Kubernetes quantity ("250m", "1Gi", "1e3", 2) as an exact fraction; ValueError if bad."""
    if isinstance(value, bool):
        raise ValueError(f"quantities must match the regular expression: {value!r}")
    if isinstance(value, (int, float)):
        return Fraction(Decimal(str(value)))
    match = _QUANTITY.match(str(value).strip())
    if not match:
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {value!r}")
    number = Fraction(Decimal(match.group(1)))
    if match.group(2):
        number *= Fraction(10) ** int(match.group(2)[1:])
    return number * _SUFFIXES[match.group(3) or ""]


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)  # Go's Quantity.Value() rounds up


def amount(name: str, value: Any) -> int:
    """The integer the scheduler counts for one resource: milli-units for CPU, units otherwise."""
    try:
        return _amount(name, value)
    except TypeError:  # unhashable: a bad value, parse_quantity says why
        return _amount.__wrapped__(name, value)


@functools.lru_cache(maxsize=4096, typed=True)  # typed: True must not hit 1's entry
def _amount(name: str, value: Any) -> int:
    # Every cycle parses the same few strings ("100m", "500Mi") several times over: parse each once.
    q = parse_quantity(value)
    return _ceil(q * 1000) if name == CPU else _ceil(q)


@dataclass
class Resource:
    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_list(cls, values: Mapping[str, Any] | None) -> "Resource":
        r = cls()
        for name, value in (values or {}).items():
            r.set(name, amount(name, value))
        return r

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def set(self, name: str, value: int) -> None:
        if name == CPU:
            self.milli_cpu = value
        elif name == MEMORY:
            self.memory = value
        elif name == EPHEMERAL_STORAGE:
            self.ephemeral_storage = value
        elif name == PODS:
            self.allowed_pod_number = value
        else:
            self.scalar[name] = value

    def add(self, other: "Resource", sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        if other.scalar:  # most pods ask for none; preemption adds and removes thousands per attempt
            for name, value in other.scalar.items():
                self.scalar[name] = self.scalar.get(name, 0) + sign * value

    def names(self) -> list[str]:
        """The resources this vector mentions (non-zero core ones and every scalar)."""
        core = [n for n, v in ((CPU, self.milli_cpu), (MEMORY, self.memory),
                               (EPHEMERAL_STORAGE, self.ephemeral_storage)) if v]
        return core + list(self.scalar)

    def clone(self) -> "Resource":
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
                        dict(self.scalar))


def _container_requests(container: Mapping[str, Any], non_zero: bool) -> Resource:
    requests = (container.get("resources") or {}).get("requests") or {}
    r = Resource.from_list(requests)
    if non_zero:
        if CPU not in requests:
            r.milli_cpu = DEFAULT_MILLI_CPU_REQUEST
        if MEMORY not in requests:
            r.memory = DEFAULT_MEMORY_REQUEST
    return r


def _max_into(total: Resource, other: Resource) -> None:
    total.milli_cpu = max(total.milli_cpu, other.milli_cpu)
    total.memory = max(total.memory, other.memory)
    total.ephemeral_storage = max(total.ephemeral_storage, other.ephemeral_storage)
    for name, value in other.scalar.items():
        total.scalar[name] = max(total.scalar.get(name, 0), value)


def pod_requests(pod: Mapping[str, Any], *, non_zero: bool = False) -> Resource:
    spec = pod.get("spec") or {}
    total = Resource()
    for container in spec.get("containers") or []:
        total.add(_container_requests(container, non_zero))
    sidecars = Resource()
    init_peak = Resource()
    for container in spec.get("initContainers") or []:
        requests = _container_requests(container, non_zero)
        if container.get("restartPolicy") == "Always":
            sidecars.add(requests)
            total.add(requests)
            init_peak_now = sidecars.clone()
        else:
            init_peak_now = sidecars.clone()
            init_peak_now.add(requests)
        _max_into(init_peak, init_peak_now)
    _max_into(total, init_peak)
    pod_level = (spec.get("resources") or {}).get("requests")
    if pod_level:
        for name, value in pod_level.items():
            total.set(name, amount(name, value))
    total.add(Resource.from_list(spec.get("overhead")))
    return total
