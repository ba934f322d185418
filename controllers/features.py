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

from client.feature_gates import ALPHA, GateTable

# name -> (1.36 stage, upstream default)
GATES: Mapping[str, tuple[str, bool]] = {
    "GenericWorkload": (ALPHA, False),
    "WorkloadWithJob": (ALPHA, False),
    "DRAWorkloadResourceClaims": (ALPHA, False),
}
TABLE = GateTable(GATES)
defaults, parse, select = TABLE.defaults, TABLE.parse, TABLE.select

Features = Mapping[str, bool]


def job_workloads(features: Features) -> bool:
    """The Job controller gives gang-shaped Indexed Jobs a Workload and a PodGroup."""
    return bool(features.get("GenericWorkload")) and bool(features.get("WorkloadWithJob"))


def group_claims(features: Features) -> bool:
    """The ResourceClaim controller makes the claims a PodGroup's `resourceClaims` name."""
    return bool(features.get("GenericWorkload")) and bool(features.get("DRAWorkloadResourceClaims"))
