"""The search: devices for all of a pod's claims on one node, or why there are none.

`Allocator(inventory, classes, allocated, taint_rules, features)` serves one scheduling cycle;
`allocate(node, claims)` tries every node the plugin's Filter asks about. Like upstream's
structured allocator it walks claims, their requests and each request's devices in order, takes
the first device that is free, selected (class and request CEL), tolerated, within capacity and
counters, and keeps the claim's constraints; when a later request cannot be met it backs out the
last choice and tries the next device (combinations, not permutations). The first full solution
wins. Results are `status.allocation` objects (`results.py`). Texts are upstream's; `fatal`
marks the errors upstream returns as errors (the plugin's Filter then fails with Error), the rest
are Unschedulable reasons ("cannot allocate all claims").
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from scheduler.dra import capacity, requests as requestsmod, results, selectors, taints
from scheduler.dra.allocated import AllocatedState
from scheduler.dra.constraints import Constraint
from scheduler.dra.devices import Device, DeviceID, device_id_text
from scheduler.dra.inventory import Inventory, Pool
from scheduler.dra.node_devices import NodeDevices, NodeView
from scheduler.dra.requests import ALLOCATION_RESULTS_MAX_SIZE, Claim, ClaimError, Request

__all__ = ["AllocatedState", "Allocator", "FEATURE_DEFAULTS", "Outcome"]

# The DRA gates the allocator reads, with their 1.36 defaults (api-1.36.md §2.2).
FEATURE_DEFAULTS = {
    "DRAPrioritizedList": True,
    "DRAAdminAccess": True,
    "DRAPartitionableDevices": True,
    "DRADeviceTaints": True,
    "DRADeviceTaintRules": False,
    "DRAConsumableCapacity": True,
    "DRADeviceBindingConditions": True,
    "DRAResourceClaimDeviceStatus": True,
}
CANNOT_ALLOCATE = "cannot allocate all claims"
INVALID_POOLS = "invalid resource pools were encountered"


class Outcome:
    """`allocations`: one `status.allocation` per claim, in order, or None; `reason`: why not;
    `fatal`: upstream returns an error here rather than "cannot allocate" (Filter → Error).

    A found solution is written out (`results.py`) only when `allocations` is first read: Filter
    searches every feasible node for a pod, and only the node Reserve picks (and Score, for
    prioritized lists) needs the status objects. `found` says whether there is one without that."""

    __slots__ = ("_allocations", "_search", "reason", "fatal")

    def __init__(self, allocations: list[dict[str, Any]] | None, reason: str = "", fatal: bool = False,
                 search: "_Search | None" = None):
        self._allocations = allocations
        self._search = search
        self.reason = reason
        self.fatal = fatal

    @property
    def found(self) -> bool:
        return self._allocations is not None or self._search is not None

    @property
    def allocations(self) -> list[dict[str, Any]] | None:
        if self._search is not None:
            search, self._search = self._search, None
            self._allocations = [results.allocation(search, index) for index in range(len(search.claims))]
        return self._allocations

    def __repr__(self) -> str:
        return f"Outcome(allocations={self.allocations!r}, reason={self.reason!r}, fatal={self.fatal})"


class _Fatal(Exception):
    pass


class _Taken:
    """One device chosen for one request, with what to give back when the search backs out."""

    __slots__ = ("device", "request", "pool", "amounts", "share", "counters", "constraints")

    def __init__(self, device: Device, request: Request, pool: Pool):
        self.device = device
        self.request = request
        self.pool = pool
        self.amounts: dict[str, Decimal] | None = None
        self.share = False
        self.counters = False
        self.constraints: list[Constraint] = []


class Allocator:
    def __init__(self, inventory: Inventory, classes: dict[str, dict[str, Any]], allocated: AllocatedState,
                 taint_rules: list[dict[str, Any]] | None = None, features: dict[str, bool] | None = None,
                 node_devices: NodeDevices | None = None):
        """`node_devices`: a cache that outlives this cycle (the plugin's), else one for this cycle."""
        self.inventory = inventory
        self.node_devices = node_devices if node_devices is not None else NodeDevices()
        self.classes = classes
        self.allocated = allocated
        self.features = {**FEATURE_DEFAULTS, **(features or {})}
        # DeviceTaintRules count only with their gate (beta, off by default in 1.36).
        self.rules = taints.Rules(taint_rules or [] if self.features["DRADeviceTaintRules"] else [])
        self._claims: dict[Any, Claim | ClaimError] = {}
        self._available: dict[tuple[int, str, str], dict[str, dict[str, Decimal]]] = {}

    def _prepared(self, claim: dict[str, Any], admin_namespace: bool) -> Claim:
        meta = claim.get("metadata") or {}
        key = (meta.get("uid") or id(claim), meta.get("resourceVersion"), admin_namespace)
        prepared = self._claims.get(key)
        if prepared is None:
            try:
                prepared = requestsmod.prepare(claim, self.classes, self.features, admin_namespace)
            except ClaimError as err:
                prepared = err
            self._claims[key] = prepared
        if isinstance(prepared, ClaimError):
            raise prepared
        return prepared

    def allocate(self, node: dict[str, Any], claims: list[dict[str, Any]], *,
                 admin_access_namespace: bool = False) -> Outcome:
        try:
            prepared = [self._prepared(c, admin_access_namespace) for c in claims]
            # Read only: the view is shared by every search on this node until a slice or the node
            # changes, and its free part until a device of the node's pools is taken or given back.
            view = self.node_devices.of(self.inventory, node, self.features["DRAPartitionableDevices"])
            free = self.node_devices.free((node.get("metadata") or {}).get("name", ""), view, self.allocated)
            if not free and _first_needs_a_free_device(prepared):
                # What the search would find at its first step, without setting one up: on a busy
                # cluster that is most nodes Filter asks about.
                return Outcome(None, INVALID_POOLS if any(pool.invalid for pool in view[1]) else CANNOT_ALLOCATE)
            return _Search(self, node, prepared, view, free).run()
        except (ClaimError, _Fatal, selectors.SelectorError, capacity.CapacityError) as err:
            return Outcome(None, str(err), fatal=True)

    def available_counters(self, pool: Pool) -> dict[str, dict[str, Decimal]]:
        """The pool's counters minus what allocated devices of the pool consume (negative means none)."""
        key = (id(pool), pool.key[0], pool.key[1])
        available = self._available.get(key)
        if available is None:
            available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            for device in pool.devices_by_name.values():
                if device.consumes and self.allocated.in_use(device.id):
                    for set_name, counters in device.consumes:
                        target = available.get(set_name)
                        if target is None:
                            continue
                        for name, value in counters.items():
                            if name in target:
                                target[name] -= value
            self._available[key] = available
        return available


def _first_needs_a_free_device(claims: list[Claim]) -> bool:
    """Whether the search's first step is an ordinary device request (ExactCount, no admin access,
    in every alternative): with no free device on the node it fails there, before anything could
    raise, and so does the whole search."""
    if not claims or not claims[0].requests:
        return False
    return all(not request.all and not request.admin for request in claims[0].requests[0])


def _selectable(features: dict[str, bool], request: Request, device: Device) -> bool:
    """The device passes the request's class and own selectors (remembered on the device) and
    has the capacity the request asks for."""
    if device.binding_conditions and not features["DRADeviceBindingConditions"]:
        return False
    passes = device.matches.get(request.selection)
    if passes is None:
        # Raises on a broken selector; then nothing is remembered under the combined key.
        passes = (selectors.match(request.class_selectors, device, request.class_owner)
                  and selectors.match(request.selectors, device, request.owner))
        device.matches[request.selection] = passes
    if not passes:
        return False
    if request.capacity and features["DRAConsumableCapacity"]:
        if capacity.resolve(request.capacity, device) is None:
            return False
    return True


class _Search:
    """The state of one `allocate` call: devices on the node, choices so far, and the recursion."""

    def __init__(self, owner: Allocator, node: dict[str, Any], claims: list[Claim], view: NodeView,
                 free_devices: list[tuple[Pool, Device]]):
        """`view`: the node's devices and pools (`NodeDevices.of`); `free_devices`: those no claim
        holds exclusively (`NodeDevices.free`). Both read only."""
        self.owner = owner
        self.features = owner.features
        self.node = node
        self.claims = claims
        self.allocated = owner.allocated
        self.node_devices, self.pools = view
        self.free_devices = free_devices
        self.candidates: dict[int, _Candidates] = {}
        self.all_devices: dict[int, list[tuple[Pool, Device]]] = {}
        self.taken: list[list[_Taken]] = [[] for _ in claims]
        self.chosen: list[list[Request]] = [[] for _ in claims]
        # Most claims have no constraints: they share one empty tuple instead of a list each.
        self.constraints: list[Sequence[Constraint]] = [[Constraint(c) for c in claim.constraints]
                                                        if claim.constraints else () for claim in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Decimal]] = {}
        self.consumed_counters: dict[tuple[str, str], dict[str, dict[str, Decimal]]] = {}

    # -- which devices a request may use on this node

    def selectable(self, request: Request, device: Device) -> bool:
        return _selectable(self.features, request, device)

    def candidates_for(self, request: Request) -> "_Candidates":
        found = self.candidates.get(id(request))
        if found is None:
            found = self.candidates[id(request)] = _Candidates(self, request)
        return found

    def all_for(self, claim: Claim, request: Request) -> list[tuple[Pool, Device]]:
        """allocationMode All: every matching device, which needs every pool complete and valid."""
        found = self.all_devices.get(id(request))
        if found is None:
            for pool in self.pools:
                if not pool.complete:
                    raise _Fatal(f"claim {claim.ref}, request {request.name}: asks for all devices, but resource "
                                 f"pool {pool.id_text} is currently being updated")
                if pool.invalid:
                    raise _Fatal(f"claim {claim.ref}, request {request.name}: asks for all devices, but resource "
                                 f"pool {pool.id_text} is currently invalid")
            found = []
            for pool, device in self.node_devices:
                if not self.selectable(request, device):
                    continue
                if self.features["DRAConsumableCapacity"] and self.fit(request, device) is None:
                    continue
                found.append((pool, device))
            self.all_devices[id(request)] = found
        return found

    # -- the recursion

    def run(self) -> Outcome:
        if self.claim_step(0):
            return Outcome(None, search=self)
        if any(pool.invalid for pool in self.pools):
            return Outcome(None, INVALID_POOLS)
        return Outcome(None, CANNOT_ALLOCATE)

    def claim_step(self, ci: int) -> bool:
        if ci == len(self.claims):
            return True
        return self.request_step(ci, 0)

    def request_step(self, ci: int, ri: int) -> bool:
        claim = self.claims[ci]
        if ri == len(claim.requests):
            return self.claim_step(ci + 1)
        for request in claim.requests[ri]:
            self.chosen[ci].append(request)
            if request.all:
                devices = self.all_for(claim, request)
                if devices and self.all_step(ci, ri, request, devices, 0):
                    return True
            elif self.device_step(ci, ri, request, 0, 0):
                return True
            self.chosen[ci].pop()
        return False

    def all_step(self, ci: int, ri: int, request: Request, devices: list[tuple[Pool, Device]], k: int) -> bool:
        if k == len(devices):
            return self.request_step(ci, ri + 1)
        if len(self.taken[ci]) + len(devices) - k > ALLOCATION_RESULTS_MAX_SIZE:
            return False
        pool, device = devices[k]
        taken = self.take(ci, request, pool, device, must=True)
        if taken is None:
            return False
        if self.all_step(ci, ri, request, devices, k + 1):
            return True
        self.give_back(ci, taken)
        return False

    def device_step(self, ci: int, ri: int, request: Request, k: int, start: int) -> bool:
        if k == request.count:
            return self.request_step(ci, ri + 1)
        if len(self.taken[ci]) + request.count - k > ALLOCATION_RESULTS_MAX_SIZE:
            return False
        candidates = self.candidates_for(request)
        index = start
        while (found := candidates.at(index)) is not None:
            index += 1
            taken = self.take(ci, request, found[0], found[1], must=False)
            if taken is None:
                continue
            if self.device_step(ci, ri, request, k + 1, index):
                return True
            self.give_back(ci, taken)
        return False

    # -- taking one device and giving it back

    def in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.allocated.devices or bool(self.allocating.get(device_id))

    def fit(self, request: Request, device: Device) -> dict[str, Decimal] | None:
        resolved = capacity.resolve(request.capacity, device)
        if resolved is None:
            return None
        return capacity.fits(device, resolved, self.allocated.capacity.get(device.id),
                             self.allocating_capacity.get(device.id))

    def take(self, ci: int, request: Request, pool: Pool, device: Device, must: bool) -> _Taken | None:
        features = self.features
        device_id = device.id
        share = features["DRAConsumableCapacity"] and device.allow_multiple
        if request.admin:
            if not share and ci in self.allocating.get(device_id, ()):
                return None
        elif self.in_use(device_id):
            return None
        if device.consumes and not features["DRAPartitionableDevices"]:
            return None
        if features["DRADeviceTaints"]:
            device_taints = device.taints
            if self.owner.rules:
                device_taints = device_taints + self.owner.rules.taints_for(device)
            if device_taints and taints.blocked(device_taints, request.tolerations):
                return None
        taken = _Taken(device, request, pool)
        if features["DRAConsumableCapacity"]:
            amounts = self.fit(request, device)
            if amounts is None:
                return None
            if share:
                taken.amounts = amounts
        # A shared device already in use has taken its counters once already.
        if device.consumes and not (share and (device_id in self.allocated.capacity
                                               or device_id in self.allocating_capacity)):
            if not self.take_counters(pool, device):
                return None
            taken.counters = True
        for constraint in self.constraints[ci]:
            if not constraint.add(request.base, request.sub, device):
                for added in taken.constraints:
                    added.remove()
                if taken.counters:
                    self.return_counters(pool, device)
                if must:
                    raise _Fatal(f"claim {self.claims[ci].ref}, request {request.sub or request.base}: cannot add "
                                 f"device {device_id_text(device_id)} because a claim constraint would not be satisfied")
                return None
            taken.constraints.append(constraint)
        if share:
            taken.share = True
            held = self.allocating_capacity.setdefault(device_id, {})
            for key, value in (taken.amounts or {}).items():
                held[key] = held.get(key, Decimal(0)) + value
        else:
            self.allocating.setdefault(device_id, set()).add(ci)
        self.taken[ci].append(taken)
        return taken

    def give_back(self, ci: int, taken: _Taken) -> None:
        device_id = taken.device.id
        for constraint in taken.constraints:
            constraint.remove()
        if taken.share:
            held = self.allocating_capacity[device_id]
            for key, value in (taken.amounts or {}).items():
                held[key] -= value
            if not any(other.device.id == device_id and other is not taken and other.share
                       for claim_taken in self.taken for other in claim_taken):
                del self.allocating_capacity[device_id]
        else:
            self.allocating[device_id].discard(ci)
        if taken.counters:
            self.return_counters(taken.pool, taken.device)
        self.taken[ci].remove(taken)

    def take_counters(self, pool: Pool, device: Device) -> bool:
        available = self.owner.available_counters(pool)
        consumed = self.consumed_counters.setdefault(pool.key, {})
        for set_name, counters in device.consumes:
            target = consumed.setdefault(set_name, {})
            for name, value in counters.items():
                target[name] = target.get(name, Decimal(0)) + value
        for set_name, counters in available.items():
            used = consumed.get(set_name)
            if not used:
                continue
            for name, value in counters.items():
                if used.get(name, 0) > value:
                    self.return_counters(pool, device)
                    return False
        return True

    def return_counters(self, pool: Pool, device: Device) -> None:
        consumed = self.consumed_counters[pool.key]
        for set_name, counters in device.consumes:
            target = consumed[set_name]
            for name, value in counters.items():
                target[name] -= value


class _Candidates:
    """The node's devices one request may use, in node order, worked out only as far as the search
    reads: most searches stop at the first free device, and Filter runs one per node per pod.

    A device another claim holds exclusively is one `take` turns down first thing for any request
    but an admin one, so such a request reads only the node's free devices (on a busy node most
    are taken, and the free list outlives the cycle). It holds no reference back to the search, so
    a finished search is freed at once, not by the cycle GC."""

    __slots__ = ("_features", "_request", "_source", "_next", "_found")

    def __init__(self, search: _Search, request: Request):
        self._features = search.features
        self._request = request
        # The free list is current: `NodeDevices.free` redid it if the node's pools changed since.
        self._source = search.free_devices if not request.admin else search.node_devices
        self._next = 0  # the next entry of `_source` to look at
        self._found: list[tuple[Pool, Device]] = []

    def at(self, index: int) -> tuple[Pool, Device] | None:
        """The index-th candidate, or None when there are not that many."""
        found, source = self._found, self._source
        while len(found) <= index:
            if self._next >= len(source):
                return None
            pool, device = entry = source[self._next]
            self._next += 1
            if pool.complete and not pool.invalid and _selectable(self._features, self._request, device):
                found.append(entry)
        return found[index]
