"""The 1.36 feature gates the scheduler reads, with their defaults, and the `--feature-gates` flag.

The scheduler may not import the API server's gate table (`.importlinter`), so it keeps its own:
the gates kube-scheduler 1.36 consults for behaviour haru models. As everywhere in haru
(ARCHITECTURE principle 6), alpha and beta gates default to on; the gates upstream locks refuse the
other value (a GA gate is locked only from the release upstream says, so DRAPrioritizedList can be
turned off in 1.36).
`parse("A=true,B=false")` answers a plain `dict[str, bool]` (the `Features` mapping plugin factories
get) or raises ValueError with kube-scheduler's text (`client/feature_gates.py` parses). Called by
`python -m scheduler` and the supervisor's embedded start.
"""

from __future__ import annotations

from collections.abc import Mapping

from client.feature_gates import ALPHA, BETA, GA, GateTable

# name -> (1.36 stage, upstream default); LOCKED below refuse the other value.
GATES: Mapping[str, tuple[str, bool]] = {
    "DynamicResourceAllocation": (GA, True),
    "DRAAdminAccess": (GA, True),
    "DRAPrioritizedList": (GA, True),
    "DRAConsumableCapacity": (BETA, True),
    "DRADeviceBindingConditions": (BETA, True),
    "DRADeviceTaints": (BETA, True),
    "DRADeviceTaintRules": (BETA, False),
    "DRAExtendedResource": (BETA, True),
    "DRAPartitionableDevices": (BETA, True),
    "DRAResourceClaimDeviceStatus": (BETA, True),
    "DRASchedulerFilterTimeout": (BETA, True),
    "DRAListTypeAttributes": (ALPHA, False),
    "DRAWorkloadResourceClaims": (ALPHA, False),
    "GenericWorkload": (ALPHA, False),
    "GangScheduling": (ALPHA, False),
    "TopologyAwareWorkloadScheduling": (ALPHA, False),
    "WorkloadAwarePreemption": (ALPHA, False),
    "PodLevelResources": (BETA, True),
    "InPlacePodVerticalScaling": (GA, True),
    "SchedulerAsyncPreemption": (BETA, True),
    "SchedulerQueueingHints": (GA, True),
    "NominatedNodeNameForExpectation": (BETA, True),
    "PodObservedGenerationTracking": (GA, True),
    "StorageCapacityScoring": (ALPHA, False),
}

# Locked to their default in 1.36 (apiserver/data/feature-gates-1.36.json, the same facts).
LOCKED = frozenset({"DynamicResourceAllocation", "DRAAdminAccess", "InPlacePodVerticalScaling",
                    "SchedulerQueueingHints", "PodObservedGenerationTracking"})

TABLE = GateTable(GATES, LOCKED)
defaults, parse, select = TABLE.defaults, TABLE.parse, TABLE.select
