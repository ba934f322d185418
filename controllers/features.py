"""The 1.36 feature gates the controllers read, and kube-controller-manager's `--feature-gates` flag.

Controllers may not import the API server's gate table (`.importlinter`), so this keeps their own:
GenericWorkload, WorkloadWithJob (the Job controller's Workload and PodGroup, KEP-5547) and
DRAWorkloadResourceClaims (claims for a whole PodGroup, KEP-5729); alpha gates default to on, as
everywhere in haru. `parse(text)` answers a `dict[str, bool]` or raises ValueError with
component-base's text; `select(text)` keeps the part of a cluster-wide flag that names these.
Used by `python -m controllers`, the supervisor and `haru up`.
"""

from __future__ import annotations

from collections.abc import Mapping

ALPHA, BETA, GA = "alpha", "beta", "ga"

# name -> (1.36 stage, upstream default)
GATES: Mapping[str, tuple[str, bool]] = {
    "GenericWorkload": (ALPHA, False),
    "WorkloadWithJob": (ALPHA, False),
    "DRAWorkloadResourceClaims": (ALPHA, False),
}
_SWITCHES = ("AllAlpha", "AllBeta")
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})

Features = Mapping[str, bool]


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
        if key in _SWITCHES:
            stage = ALPHA if key == "AllAlpha" else BETA
            values.update({name: value for name, (gate_stage, _) in GATES.items() if gate_stage == stage})
            continue
        if key not in GATES:
            raise ValueError(f"unrecognized feature gate: {key}")
        values[key] = value
    return values


def select(text: str) -> str:
    """The part of a cluster-wide `--feature-gates` value that names the controllers' gates."""
    return ",".join(item.strip() for item in text.split(",")
                    if item.partition("=")[0].strip() in (*GATES, *_SWITCHES))


def job_workloads(features: Features) -> bool:
    """The Job controller gives gang-shaped Indexed Jobs a Workload and a PodGroup."""
    return bool(features.get("GenericWorkload")) and bool(features.get("WorkloadWithJob"))


def group_claims(features: Features) -> bool:
    """The ResourceClaim controller makes the claims a PodGroup's `resourceClaims` name."""
    return bool(features.get("GenericWorkload")) and bool(features.get("DRAWorkloadResourceClaims"))
