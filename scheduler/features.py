"""The 1.36 feature gates the scheduler reads, with their defaults, and the `--feature-gates` flag.

The scheduler may not import the API server's gate table (`.importlinter`), so it keeps its own:
the gates kube-scheduler 1.36 consults for behaviour haru models. As everywhere in haru
(ARCHITECTURE principle 6), alpha and beta gates default to on; the gates upstream locks refuse the
other value (a GA gate is locked only from the release upstream says, so DRAPrioritizedList can be
turned off in 1.36).
`parse("A=true,B=false")` answers a plain `dict[str, bool]` (the `Features` mapping plugin factories
get) or raises ValueError with kube-scheduler's text. Called by `python -m scheduler` and the
supervisor's embedded start.
"""

from __future__ import annotations

from collections.abc import Mapping

ALPHA, BETA, GA = "alpha", "beta", "ga"

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

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def defaults() -> dict[str, bool]:
    return {name: (True if stage in (ALPHA, BETA) else default) for name, (stage, default) in GATES.items()}


def parse(text: str) -> dict[str, bool]:
    """The gate values for a `--feature-gates` value (component-base's syntax and messages)."""
    values = defaults()
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep:
            raise ValueError(f"missing bool value for {key}")
        if raw in _TRUE:
            value = True
        elif raw in _FALSE:
            value = False
        else:
            raise ValueError(f'invalid value of {key}={raw}, err: strconv.ParseBool: parsing "{raw}": invalid syntax')
        if key in ("AllAlpha", "AllBeta"):
            stage = ALPHA if key == "AllAlpha" else BETA
            for name, (gate_stage, _) in GATES.items():
                if gate_stage == stage:
                    values[name] = value
            continue
        spec = GATES.get(key)
        if spec is None:
            raise ValueError(f"unrecognized feature gate: {key}")
        if key in LOCKED and value != spec[1]:
            locked = "true" if spec[1] else "false"
            raise ValueError(f"cannot set feature gate {key} to {'true' if value else 'false'}, "
                             f"feature is locked to {locked}")
        values[key] = value
    return values


def select(text: str) -> str:
    """The part of a cluster-wide `--feature-gates` value that names gates the scheduler has.

    `haru up` takes one flag for every component; the API server's own gates (ShardedListAndWatch…)
    are not the scheduler's to refuse.
    """
    kept = []
    for item in text.split(","):
        key = item.partition("=")[0].strip()
        if key in GATES or key in ("AllAlpha", "AllBeta"):
            kept.append(item.strip())
    return ",".join(kept)
