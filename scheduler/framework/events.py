"""Cluster events and queueing hints: which changes can make a rejected pod schedulable.

A plugin that rejects pods lists, in `events_to_register()`, the `ClusterEvent`s that might undo
its rejection, each with an optional hint function `(pod, old, new) -> QueueingHint`. When an
event arrives, the queue (`scheduler/queue.py`) moves an unschedulable pod back to active (or
backoff) only if a plugin that rejected it answers `QUEUE` for that event. Names follow upstream's
`fwk.EventResource` and `fwk.ActionType`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any


class ActionType(enum.IntFlag):
    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATIONS = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 2048
    UPDATE = 4096  # any other update, or every update for resources without finer kinds
    ALL = 8191


class Resource(str, enum.Enum):
    """The event sources upstream names; values are upstream's strings (used in metrics)."""

    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnscheduledPod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "storage.k8s.io/StorageClass"
    CSI_NODE = "storage.k8s.io/CSINode"
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    DEVICE_TAINT_RULE = "DeviceTaintRule"
    POD_GROUP = "PodGroup"
    WORKLOAD = "Workload"
    WILDCARD = "*"


class QueueingHint(enum.Enum):
    QUEUE = "Queue"
    SKIP = "QueueSkip"


@dataclass(frozen=True)
class ClusterEvent:
    resource: Resource
    action: ActionType
    label: str = ""

    def matches(self, other: "ClusterEvent") -> bool:
        """Does the registered event `self` cover the incoming event `other`?"""
        # Plain ints: IntFlag's own `&` builds a flag member per call, and this runs per pending
        # pod and registered event on every cluster event.
        if self.resource is Resource.WILDCARD:
            return (self.action.value & other.action.value) != 0
        same = self.resource is other.resource or (
            self.resource is Resource.POD and other.resource in (Resource.ASSIGNED_POD, Resource.UNSCHEDULED_POD))
        return same and (self.action.value & other.action.value) != 0


HintFn = Callable[[dict[str, Any], Any, Any], QueueingHint]


@dataclass(frozen=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: HintFn | None = None  # None: always QUEUE
    # Optional, with a hint: (old, new) -> the uids of the only pods the hint may answer anything
    # but SKIP for, or None for any pod. The queue asks it once per event and skips the hint for
    # the others (a claim event concerns the few pods naming the claim, not every pending pod).
    candidates: Callable[[Any, Any], Collection[str] | None] | None = None


FORCE_ACTIVATE = ClusterEvent(Resource.WILDCARD, ActionType.ALL, "ForceActivate")
UNSCHEDULABLE_TIMEOUT = ClusterEvent(Resource.WILDCARD, ActionType.ALL, "UnschedulableTimeout")
