"""`DynamicResources`: the scheduler plugin that allocates a pod's ResourceClaims, upstream's plugin.

PreEnqueue holds a pod until its claims exist. PreFilter collects them (an allocated claim brings
its nodeSelector, an unallocated one goes to the allocator of `scheduler/dra`) plus the special
claim for extended resources (`extended.py`). Filter allocates per node, Score prefers nodes where
better-ranked subrequests fit, Reserve puts the chosen allocation in flight (`claim_tracker.py`),
Unreserve drops it, PreBind writes allocation and `reservedFor` (`claim_writes.py`) and waits for
binding conditions (`binding_conditions.py`); PostFilter deallocates a claim that keeps the pod
off every node.
Messages, codes and events are upstream's (`dynamicresources.go`).
"""

from __future__ import annotations

import asyncio
import copy
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from client import errors
from client import resources as kinds
from scheduler.dra import allocator, inventory, node_devices
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint, Resource
from scheduler.framework.interfaces import (MAX_NODE_SCORE, Features, Handle, NodeScore, NodeToStatus,
                                            PostFilterResult, PreFilterResult)
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.status import Status
from scheduler.plugins import names
from scheduler.plugins.dynamic_resources import (binding_conditions, claim_writes, extended, group_claims,
                                                 node_selector, pod_claims)
from scheduler.plugins.dynamic_resources.claim_tracker import ClaimTracker
from scheduler.plugins.dynamic_resources.inventory_sync import InventorySync

Obj = dict[str, Any]
log = logging.getLogger(__name__)
STATE_KEY = names.DYNAMIC_RESOURCES
CLAIM_INDEX = "by_claim_key"
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
FIRST_AVAILABLE_MAX_SIZE = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize
BINDING_POLL = 0.5  # seconds; upstream polls the API every 5 s, we read the informer cache


# The gates this plugin reads, with their 1.36 defaults; the allocator's own ones come with it.
FEATURE_DEFAULTS = {**allocator.FEATURE_DEFAULTS, "DRAExtendedResource": True}


def _enabled(features: Features, gate: str) -> bool:
    return features.get(gate, FEATURE_DEFAULTS.get(gate, True))


@dataclass
class _State:
    """PreFilter's findings for one pod, read by every later point (shared by clones, as upstream)."""

    claims: list[Obj] = field(default_factory=list)  # user claims in spec order, the special one last
    extended_index: int | None = None
    dra_requests: dict[str, int] = field(default_factory=dict)
    mapping: dict[str, str] = field(default_factory=dict)
    selectors: list[Obj | None] = field(default_factory=list)  # allocated claims' nodeSelector
    allocations: list[Obj | None] = field(default_factory=list)  # chosen in Reserve
    allocator: allocator.Allocator | None = None
    admin_access: bool = False
    unavailable: set[int] = field(default_factory=set)
    # node -> ([(claim index, allocation)], the special claim with this node's requests or None)
    node_allocations: dict[str, tuple[Sequence[tuple[int, Obj]], Obj | None]] = field(default_factory=dict)
    extended_for_node: Obj | None = None  # the special claim as Reserve chose it
    extended_template_uid: str = ""
    # Claims of the pod's PodGroup (group_claims.py): index -> the PodGroup; and the allocation a
    # sibling chose in Reserve, for the ones still in flight.
    shared: dict[int, Obj] = field(default_factory=dict)
    shared_allocations: dict[int, Obj] = field(default_factory=dict)
    ranked: bool = False  # some claim has a firstAvailable request, so Score has something to rank
    # Fixed at the end of PreFilter for Filter, which runs once per node: the user claims' indices,
    # and those of the user claims to allocate (the special claim's requests are made per node).
    users: list[int] = field(default_factory=list)
    users_to_allocate: list[int] = field(default_factory=list)

    def clone(self) -> "_State":
        return self

    def user_indices(self) -> list[int]:
        return [i for i in range(len(self.claims)) if i != self.extended_index]

    def to_allocate(self) -> list[int]:
        return [i for i, c in enumerate(self.claims) if not pod_claims.allocation(c)]


class _NodeResults(Sequence[tuple[int, Obj]]):
    """(claim index, allocation) pairs Filter found on one node, written out on first read: Filter
    runs on every feasible node, and only the node Reserve gets (and Score, for prioritized lists)
    needs the allocation objects (`allocator.Outcome.allocations`)."""

    def __init__(self, indices: list[int], outcome: allocator.Outcome) -> None:
        self._indices = indices
        self._outcome: allocator.Outcome | None = outcome
        self._pairs: list[tuple[int, Obj]] = []

    def _built(self) -> list[tuple[int, Obj]]:
        if self._outcome is not None:
            self._pairs = list(zip(self._indices, self._outcome.allocations or []))
            self._outcome = None
        return self._pairs

    def __getitem__(self, index: Any) -> Any:
        return self._built()[index]

    def __len__(self) -> int:
        return len(self._built())


class DynamicResources:
    name = names.DYNAMIC_RESOURCES

    def __init__(self, handle: Handle, features: Features, *,
                 binding_timeout: float = binding_conditions.DEFAULT_TIMEOUT) -> None:
        self.handle = handle
        self.features = {**FEATURE_DEFAULTS, **features}
        self.claims = ClaimTracker(handle.store(kinds.RESOURCECLAIMS))
        self.slices = InventorySync(handle.store(kinds.RESOURCESLICES), inventory.Inventory())
        self._node_devices = node_devices.NodeDevices()  # which devices each node sees, across cycles
        self.binding_timeout = binding_timeout
        self.extended_enabled = _enabled(features, "DRAExtendedResource")
        self.binding_enabled = (_enabled(features, "DRADeviceBindingConditions")
                                and _enabled(features, "DRAResourceClaimDeviceStatus"))
        self._background: set[asyncio.Task[Any]] = set()
        # The pods by the claims they name, for the claim-event hint (see `_may_use`).
        self._pods = handle.store(kinds.PODS)
        self._pods.add_indexer(CLAIM_INDEX, pod_claims.claim_keys)
        self._users: tuple[Obj, set[str]] | None = None  # (claim object, uids of the pods naming it)
        # Asked for now, so the informers are synced before the first pod (Handle.store starts them).
        self._namespaces = handle.store(kinds.NAMESPACES)
        self._taint_rule_store = (handle.store(kinds.DEVICETAINTRULES)
                                  if _enabled(self.features, "DRADeviceTaintRules") else None)
        # KEP-5729: a PodGroup's claims are shared by its pods and reserved for the PodGroup.
        self._pod_groups = (handle.store(kinds.PODGROUPS) if self.features.get("GenericWorkload")
                            and self.features.get("DRAWorkloadResourceClaims") else None)

    # --- stores -----------------------------------------------------------------------------

    def _classes(self) -> dict[str, Obj]:
        return {c["metadata"]["name"]: c for c in self.handle.store(kinds.DEVICECLASSES)}

    def _taint_rules(self) -> list[Obj]:
        return self._taint_rule_store.list() if self._taint_rule_store is not None else []

    def _admin_access_namespace(self, namespace: str) -> bool:
        ns = self._namespaces.get(namespace) or {}
        return ((ns.get("metadata") or {}).get("labels") or {}).get(ADMIN_ACCESS_LABEL) == "true"

    # --- events -----------------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
        events = [
            ClusterEventWithHint(ClusterEvent(Resource.NODE, node_actions)),
            # Allocation is tracked in the claims, so their changes may make pods schedulable.
            ClusterEventWithHint(ClusterEvent(Resource.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE),
                                 self.is_schedulable_after_claim_change, self.claim_change_candidates),
            # The claim controller writing the generated claim's name into the pod's status.
            ClusterEventWithHint(ClusterEvent(Resource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                                 self.is_schedulable_after_pod_change),
            ClusterEventWithHint(ClusterEvent(Resource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(Resource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)),
        ]
        if self._taint_rule_store is not None:
            # A rule that goes away (or changes) may untaint the devices a pod waits for.
            events.append(ClusterEventWithHint(ClusterEvent(Resource.DEVICE_TAINT_RULE, ActionType.ALL)))
        return events

    def is_schedulable_after_claim_change(self, pod: Obj, old: Obj | None, new: Obj | None) -> QueueingHint:
        if new is None:
            return QueueingHint.QUEUE
        deallocated = old is not None and pod_claims.allocation(old) and not pod_claims.allocation(new)
        if not deallocated and not self._may_use(pod, new):
            return QueueingHint.SKIP  # someone else's claim: what the checks below come to, without them
        try:
            used = pod_claims.claims_of(pod, self.claims.get)
        except pod_claims.NotUsable:
            return QueueingHint.SKIP
        if old is not None and pod_claims.allocation(old) and not pod_claims.allocation(new):
            return QueueingHint.QUEUE  # deallocated: its devices are free for anyone
        uid = (new.get("metadata") or {}).get("uid")
        if not any((claim.get("metadata") or {}).get("uid") == uid for _, claim in used):
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        if (old.get("status") or {}) == (new.get("status") or {}):
            return QueueingHint.SKIP  # a finalizer or label, nothing the pod waits for
        return QueueingHint.QUEUE

    def claim_change_candidates(self, old: Obj | None, new: Obj | None) -> set[str] | None:
        """The pods `is_schedulable_after_claim_change` may queue for this event: any pod when the
        claim went away or was deallocated, else only those naming it (the pod index `_may_use`
        reads). The queue holds only pods its informer's store holds, so none is left out."""
        if new is None or (old is not None and pod_claims.allocation(old) and not pod_claims.allocation(new)):
            return None
        return self._users_of(new)

    def _users_of(self, claim: Obj) -> set[str]:
        """The uids of the stored pods naming `claim`, worked out once per claim object (event)."""
        users = self._users
        if users is None or users[0] is not claim:
            meta = claim.get("metadata") or {}
            found = self._pods.by_index(CLAIM_INDEX, f"{meta.get('namespace', '')}/{meta.get('name', '')}")
            users = self._users = (claim, {(p.get("metadata") or {}).get("uid", "") for p in found})
        return users[1]

    def _may_use(self, pod: Obj, claim: Obj) -> bool:
        """`pod_claims.may_use`, answered from the pod store's claim index: the queue asks it for
        every pending pod on every claim event, and the pods naming one claim are worked out once
        per event (the claim object). The store's copy of a pod is the newest, and the names a pod
        gives only grow, so a pod the index leaves out does not name the claim; a pod the store
        does not hold (or holds under another uid) is asked directly."""
        uid = (pod.get("metadata") or {}).get("uid", "")
        if uid in self._users_of(claim):
            return True
        stored = self._pods.get(f"{(pod.get('metadata') or {}).get('namespace', '')}/"
                                f"{(pod.get('metadata') or {}).get('name', '')}")
        if stored is None or (stored.get("metadata") or {}).get("uid", "") != uid:
            return pod_claims.may_use(pod, claim)
        return False

    def is_schedulable_after_pod_change(self, pod: Obj, old: Obj | None, new: Obj | None) -> QueueingHint:
        if new is None or (new.get("metadata") or {}).get("uid") != (pod.get("metadata") or {}).get("uid"):
            return QueueingHint.SKIP
        try:
            pod_claims.claims_of(new, self.claims.get)
        except pod_claims.NotUsable:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    # --- PreEnqueue, PreFilter --------------------------------------------------------------

    def pre_enqueue(self, pod: Obj) -> Status | None:
        try:
            pod_claims.claims_of(pod, self.claims.get)
        except pod_claims.NotUsable as e:
            return Status.unresolvable(str(e))
        return None

    def pre_filter(self, state: CycleState, pod: Obj,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        s = _State()
        state.write(STATE_KEY, s)
        try:
            named = pod_claims.claims_of(pod, self.claims.get)
        except pod_claims.NotUsable as e:
            return None, Status.unresolvable(str(e))
        claims = [claim for _, claim in named]
        self._find_shared(pod, named, s)
        for index in s.shared:
            pending = self.claims.pending((claims[index].get("metadata") or {}).get("uid", ""))
            if not pod_claims.allocation(claims[index]) and pending is not None and pod_claims.allocation(pending):
                # A sibling allocated the group's claim in this cycle: share it, do not allocate again.
                claims[index] = pending
                s.shared_allocations[index] = pod_claims.allocation(pending) or {}
        if self.extended_enabled:
            special = self._pre_filter_extended(pod, s)
            if special is not None:
                s.extended_index = len(claims)
                claims.append(special)
        if not claims:
            return None, Status.skip()

        classes = self._classes()
        s.selectors = [None] * len(claims)
        s.allocations = [None] * len(claims)
        for index, claim in enumerate(claims):
            allocation = pod_claims.allocation(claim)
            if allocation:
                if not pod_claims.can_be_reserved(claim) and not pod_claims.is_reserved_for_pod(pod, claim) \
                        and not (index in s.shared and group_claims.is_reserved_for_group(
                            claim, group_claims.group_name(pod))):
                    return None, Status.unresolvable("resourceclaim in use")
                selector = allocation.get("nodeSelector")
                if selector:
                    try:
                        node_selector.check(selector)
                    except node_selector.InvalidSelector as e:
                        return None, Status.as_error(e)
                    s.selectors[index] = selector
                continue
            uid = (claim.get("metadata") or {}).get("uid", "")
            if self.claims.has_pending(uid):
                return None, Status.unresolvable(
                    f"resource claim {pod_claims.key(claim)} is in the process of being allocated")
            if index == s.extended_index:
                continue  # its requests are made per node in Filter
            status = self._check_requests(claim, classes)
            if status is not None:
                return None, status

        s.claims = claims
        s.users = s.user_indices()
        s.users_to_allocate = [i for i in s.to_allocate() if i != s.extended_index]
        s.ranked = any(request.get("firstAvailable") for claim in claims
                       for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or [])
        if s.to_allocate():
            self.slices.sync()
            allocated = self.claims.allocated_state()
            s.allocator = allocator.Allocator(self.slices.inventory, classes, allocated,
                                              taint_rules=self._taint_rules(), features=self.features,
                                              node_devices=self._node_devices)
            s.admin_access = self._admin_access_namespace((pod.get("metadata") or {}).get("namespace", ""))
        return None, None

    def _find_shared(self, pod: Obj, named: list[tuple[str, Obj]], s: _State) -> None:
        """Which of the pod's claims belong to its PodGroup (they are reserved for the group)."""
        name = group_claims.group_name(pod) if self._pod_groups is not None else None
        if not name:
            return
        assert self._pod_groups is not None
        group = self._pod_groups.get(f"{(pod.get('metadata') or {}).get('namespace', '')}/{name}")
        entries = group_claims.shared_entries(pod, group)
        for index, (entry, _) in enumerate(named):
            if entry in entries:
                assert group is not None
                s.shared[index] = group

    def _pre_filter_extended(self, pod: Obj, s: _State) -> Obj | None:
        if not extended.asks_for_any(pod):
            return None  # most pods: no class mapping to build
        mapping = extended.class_mapping(self.handle.store(kinds.DEVICECLASSES))
        requests = extended.dra_requests(pod, mapping)
        if not requests:
            return None
        s.mapping, s.dra_requests = mapping, requests
        special = extended.find_claim(pod, self.claims.owned_by((pod.get("metadata") or {}).get("uid", "")))
        if special is None:
            special = extended.template(pod)
            s.extended_template_uid = special["metadata"]["uid"]
        return special

    def _check_requests(self, claim: Obj, classes: dict[str, Obj]) -> Status | None:
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
            name = request.get("name", "")
            if request.get("exactly") is not None:
                status = self._check_class(request["exactly"].get("deviceClassName", ""), name, classes)
            elif request.get("firstAvailable"):
                if not _enabled(self.features, "DRAPrioritizedList"):
                    return Status.unresolvable(f"resource claim {pod_claims.key(claim)}, request {name}: "
                                               "has subrequests, but the DRAPrioritizedList feature is disabled")
                status = None
                for sub in request["firstAvailable"]:
                    status = self._check_class(sub.get("deviceClassName", ""), f"{name}/{sub.get('name', '')}",
                                               classes)
                    if status is not None:
                        break
            else:
                return Status.unresolvable(
                    f"resource claim {pod_claims.key(claim)}, request {name}: unknown request type")
            if status is not None:
                return status
        return None

    @staticmethod
    def _check_class(class_name: str, request: str, classes: dict[str, Obj]) -> Status | None:
        if not class_name:
            return Status.as_error(f"request {request}: unsupported request type")
        if class_name not in classes:
            # Unschedulable until a DeviceClass event: the class may still be created.
            return Status.unresolvable(f"request {request}: device class {class_name} does not exist")
        return None

    # --- Filter -----------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Obj, node: NodeInfo) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None
        node_extended = None
        if s.extended_index is not None:
            special = s.claims[s.extended_index]
            if extended.has_requests(special):
                # Left over from an earlier attempt: PostFilter deletes it and the pod starts anew.
                return Status.unresolvable("cannot schedule extended resource claim")
            try:
                demand = extended.node_demand(s.dra_requests, s.mapping, node)
            except extended.CannotFit:
                return Status.unresolvable("cannot fit resource")
            if demand:
                node_extended = copy.deepcopy(special)
                node_extended["spec"] = {"devices": {"requests": extended.device_requests(pod, demand, s.mapping)}}
            elif not s.users:
                return None  # device plugins serve everything this pod asks for here

        unavailable = []
        for index in s.users:
            claim = s.claims[index]
            selector = s.selectors[index]
            if selector is not None and not node_selector.matches(selector, node.node or {}):
                unavailable.append(index)
                continue
            if not pod_claims.allocation(claim) or not self.binding_enabled:
                continue
            try:
                ready = binding_conditions.ready(claim)
            except binding_conditions.BindingFailed:
                unavailable.append(index)
                continue
            if not ready and binding_conditions.timed_out(claim, self.binding_timeout):
                unavailable.append(index)

        results: Sequence[tuple[int, Obj]] = ()
        if s.allocator is not None:
            indices = list(s.users_to_allocate)
            to_allocate = [s.claims[i] for i in indices]
            if node_extended is not None and s.extended_index in s.to_allocate():
                indices.append(s.extended_index)
                to_allocate.append(node_extended)
            if to_allocate:
                outcome = s.allocator.allocate(node.node, to_allocate, admin_access_namespace=s.admin_access)
                if outcome.fatal:
                    # Something wrong with a claim or class (a CEL expression that fails, say):
                    # upstream aborts the attempt with an error rather than trying other nodes.
                    return Status.as_error(outcome.reason)
                if not outcome.found:
                    if outcome.reason and log.isEnabledFor(logging.DEBUG):  # asked for most nodes on a busy cluster
                        log.debug("pod %s on node %s: %s", pod_claims.key(pod), node.name, outcome.reason)
                    return Status.unresolvable("cannot allocate all claims")
                results = _NodeResults(indices, outcome)

        if unavailable:
            s.unavailable.update(unavailable)
            return Status.unresolvable("resourceclaim not available on the node")
        if s.allocator is not None:
            s.node_allocations[node.name] = (results, node_extended)
        return None

    # --- PostFilter -------------------------------------------------------------------------

    async def post_filter(self, state: CycleState, pod: Obj,
                          statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None, Status.unschedulable("no new claims to deallocate")
        special = s.claims[s.extended_index] if s.extended_index is not None else None
        candidates = list(s.unavailable)
        random.shuffle(candidates)  # no better heuristic than upstream's random map order
        pod_uid = (pod.get("metadata") or {}).get("uid")
        for index in candidates:
            if index == s.extended_index:
                continue
            claim = s.claims[index]
            reserved = pod_claims.reserved_for(claim)
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod_uid):
                try:
                    self.claims.assume(await claim_writes.deallocate(self.handle.client, claim))
                except errors.APIError as e:
                    return None, Status.as_error(claim_writes.api_message(e))
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        if special is not None and not extended.is_in_memory(special):
            try:
                await claim_writes.delete(self.handle.client, special)
            except errors.APIError as e:
                return None, Status.as_error(claim_writes.api_message(e))
            self.claims.forget(special)
            return None, Status.unschedulable("deletion of ResourceClaim completed")
        return None, Status.unschedulable("still not schedulable")

    # --- Score (prioritized lists) -----------------------------------------------------------

    def score(self, state: CycleState, pod: Obj, node: NodeInfo) -> tuple[int, Status | None]:
        """Nodes where better-ranked subrequests were allocated score higher: each chosen
        subrequest at position i of its firstAvailable list adds 8 - i (upstream's computeScore)."""
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.ranked or not _enabled(self.features, "DRAPrioritizedList"):
            return 0, None  # no firstAvailable list anywhere: every node scores 0
        entry = s.node_allocations.get(node.name)
        if entry is None:
            return 0, None
        chosen = dict(entry[0])
        total = 0
        for index, claim in enumerate(s.claims):
            allocation = pod_claims.allocation(claim) or chosen.get(index)
            if not allocation:
                continue
            picked = {r.get("request") for r in (allocation.get("devices") or {}).get("results") or []}
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
                for rank, sub in enumerate(request.get("firstAvailable") or []):
                    if f"{request.get('name', '')}/{sub.get('name', '')}" in picked:
                        total += FIRST_AVAILABLE_MAX_SIZE - rank
        return total, None

    def score_nodes(self, state: CycleState, pod: Obj, nodes: list[NodeInfo]) -> list[int]:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.ranked or not _enabled(self.features, "DRAPrioritizedList"):
            return [0] * len(nodes)  # no claim with a firstAvailable list: nothing to rank, on any node
        return [self.score(state, pod, node)[0] for node in nodes]

    def normalize_score(self, state: CycleState, pod: Obj, scores: list[NodeScore]) -> Status | None:
        """Upstream's DefaultNormalizeScore: the best node gets MAX_NODE_SCORE, the rest in proportion."""
        best = max((n.score for n in scores), default=0)
        if best > 0:
            for n in scores:
                n.score = MAX_NODE_SCORE * n.score // best
        return None

    def normalize_values(self, state: CycleState, pod: Obj, values: list[int]) -> list[int]:
        """`normalize_score` over plain ints by position (the framework's batch path)."""
        best = max(values, default=0)
        return [MAX_NODE_SCORE * v // best for v in values] if best > 0 else values

    # --- Reserve, Unreserve -----------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims or not s.to_allocate():
            return None
        entry = s.node_allocations.get(node_name)
        if entry is None or not entry[0]:
            if not [i for i in s.to_allocate() if i != s.extended_index]:
                return None  # only the special claim, and device plugins serve it on this node
            return Status.as_error("claim allocation not found for node")
        results, node_extended = entry
        for index, allocation in results:
            s.allocations[index] = allocation
            claim = s.claims[index]
            if index == s.extended_index:
                claim = s.extended_for_node = node_extended
            assert claim is not None
            pending = copy.deepcopy(claim)
            finalizers = pending["metadata"].setdefault("finalizers", [])
            if claim_writes.FINALIZER not in finalizers:
                finalizers.append(claim_writes.FINALIZER)
            pending.setdefault("status", {})["allocation"] = allocation
            self.claims.signal_pending(pending["metadata"]["uid"], pending)
        return None

    def unreserve(self, state: CycleState, pod: Obj, node_name: str) -> None:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return
        for index in s.user_indices():
            claim = s.claims[index]
            if index not in s.shared_allocations:  # a sibling's in-flight allocation is the sibling's
                self.claims.remove_pending(claim["metadata"].get("uid", ""))
            if pod_claims.allocation(claim) and pod_claims.is_reserved_for_pod(pod, claim):
                self._in_background(self._unreserve_claim(claim, pod))
        if s.extended_index is None:
            return
        special = s.claims[s.extended_index]
        self.claims.remove_pending(s.extended_template_uid or special["metadata"].get("uid", ""))
        if not extended.is_in_memory(special):
            self._in_background(self._delete_claim_logged(special))

    def _in_background(self, coro: Any) -> None:
        try:
            task = asyncio.get_running_loop().create_task(coro)
        except RuntimeError:  # no loop: a unit test calling Unreserve directly
            coro.close()
            return
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _unreserve_claim(self, claim: Obj, pod: Obj) -> None:
        try:
            updated = await claim_writes.unreserve(self.handle.client, claim, pod["metadata"].get("uid", ""))
        except errors.APIError as e:
            log.warning("unreserve %s: %s", pod_claims.key(claim), e)  # the next attempt tries again
            return
        if updated is not None:
            self.claims.assume(updated)

    async def _delete_claim_logged(self, claim: Obj) -> None:
        try:
            await claim_writes.delete(self.handle.client, claim)
        except errors.APIError as e:
            log.warning("delete %s: %s", pod_claims.key(claim), e)
            return
        self.claims.forget(claim)

    # --- PreBind ----------------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return Status.skip()
        return None

    async def pre_bind(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None
        for index, claim in enumerate(s.claims):
            if index == s.extended_index and s.allocations[index] is None and not extended.has_requests(claim):
                continue  # device plugins serve the extended resources on this node
            if pod_claims.is_reserved_for_pod(pod, claim):
                continue
            if index in s.shared:
                meta = claim["metadata"]
                current = self.claims.get(meta.get("namespace", ""), meta.get("name", "")) or claim
                if group_claims.is_reserved_for_group(current, group_claims.group_name(pod)) \
                        and pod_claims.allocation(current):
                    s.claims[index] = current
                    continue  # a sibling already reserved it for the group
                s.claims[index] = current
            try:
                s.claims[index] = await self._bind_claim(s, index, pod, node_name)
            except claim_writes.WriteError as e:
                return Status.as_error(str(e))
        if not self.binding_enabled or not binding_conditions.has_binding_conditions(s.claims):
            return None
        self.handle.events.event(pod, "Normal", "BindingConditionsPending",
                                 f"waiting for binding conditions for device on node {node_name}", "Scheduling")
        return await self._wait_for_binding(s)

    async def _wait_for_binding(self, s: _State) -> Status | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.binding_timeout
        while True:
            all_ready = True
            for index, claim in enumerate(s.claims):
                if extended.is_in_memory(claim):
                    continue  # device plugins served the extended resources; there is no claim
                meta = claim["metadata"]
                fresh = self.claims.get(meta.get("namespace", ""), meta.get("name", ""))
                if fresh is None:
                    return Status.as_error(f'resourceclaim.resource.k8s.io "{meta.get("name", "")}" not found')
                s.claims[index] = fresh
                try:
                    ready = binding_conditions.ready(fresh) if pod_claims.allocation(fresh) else True
                except binding_conditions.BindingFailed as e:
                    return Status.as_error(str(e))
                if not ready:
                    if binding_conditions.timed_out(fresh, self.binding_timeout):
                        return Status.as_error(f"claim {meta.get('name', '')} binding timeout")
                    all_ready = False
                    break
            if all_ready:
                return None
            if loop.time() >= deadline:
                return Status.as_error("device binding timeout")
            await asyncio.sleep(BINDING_POLL)

    async def _bind_claim(self, s: _State, index: int, pod: Obj, node_name: str) -> Obj:
        """Write the allocation from Reserve (if any) and the pod's reservation into the claim status."""
        claim = s.claims[index]
        allocation = s.allocations[index]
        if allocation is None and index in s.shared_allocations and not pod_claims.allocation(claim):
            allocation = s.shared_allocations[index]  # written by whichever sibling binds first
        consumer = group_claims.consumer(s.shared[index]) if index in s.shared else None
        pending_uid = claim["metadata"].get("uid", "")
        is_extended = index == s.extended_index
        client = self.handle.client
        try:
            if is_extended and extended.is_in_memory(claim):
                if s.extended_for_node is None:
                    raise claim_writes.WriteError(f"extended resource claim not found for node {node_name}")
                claim = await claim_writes.create_extended(client, s.extended_for_node)
                s.claims[index] = claim  # from now on Unreserve deletes the real object
                self.claims.assume(claim)
            claim = await claim_writes.reserve(client, claim, allocation, pod, stamp=self.binding_enabled,
                                               consumer=consumer)
        finally:
            if allocation is not None:
                self.claims.remove_pending(pending_uid)
        self.claims.assume(claim)
        if is_extended:
            await claim_writes.map_extended(client, pod, claim, extended.request_mappings(claim, pod))
        return claim
