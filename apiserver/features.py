"""Feature gates: which Kubernetes 1.36 features this haru process has switched on.

Owns the gates of 1.36 (stage, upstream default, lock) and the kube-apiserver `--feature-gates`
syntax (`A=true,B=false`, plus the `AllAlpha`/`AllBeta` switches). `REGISTERED` is every gate
kube-apiserver 1.36 accepts (`data/feature-gates-1.36.json`: one registry for all components, so
a scheduler or kubelet gate is accepted too); `KNOWN` the ones haru behaves on. Unlike upstream,
every alpha and beta gate defaults to on (ARCHITECTURE principle 6); the flag turns each off.
Deprecated gates keep upstream's default; a locked gate refuses the other value. The cluster
command parses the flag once; the registry (`registry.py`) asks which gated resources to serve,
and handlers and co-processes ask about behaviour behind a gate.
"""

from __future__ import annotations

import json
import os
import types
from collections.abc import Mapping
from dataclasses import dataclass

ALPHA, BETA, GA, DEPRECATED = "alpha", "beta", "ga", "deprecated"

# The two switches of component-base's feature gate: they set every alpha (beta) gate at once,
# and a gate named explicitly in the same flag wins over them.
ALL_ALPHA, ALL_BETA = "AllAlpha", "AllBeta"


@dataclass(frozen=True)
class GateSpec:
    stage: str
    upstream_default: bool
    locked: bool = False

    @property
    def haru_default(self) -> bool:
        # Principle 6: what is alpha or beta in 1.36 is on here; GA and deprecated keep upstream's default.
        return True if self.stage in (ALPHA, BETA) else self.upstream_default


# Gates haru's API, scheduler and nodes behave on. Stages, defaults and locks are the 1.36 ones from
# shared/reference (resources.md "defaultOn", api-1.36.md §1.1, §2.2, §3.1, §4, §5, §8); where the
# upstream list below says otherwise, these win (they were checked against the 1.36 release).
KNOWN: Mapping[str, GateSpec] = {
    # API groups and resources (resources-1.36.json featureGate)
    "ClusterTrustBundle": GateSpec(BETA, False),
    "CoordinatedLeaderElection": GateSpec(BETA, False),
    "DRADeviceTaintRules": GateSpec(BETA, False),
    "DRAResourcePoolStatus": GateSpec(ALPHA, False),
    "DynamicResourceAllocation": GateSpec(GA, True, locked=True),
    "GenericWorkload": GateSpec(ALPHA, False),
    "InPlacePodVerticalScaling": GateSpec(GA, True, locked=True),
    "MultiCIDRServiceAllocator": GateSpec(GA, True, locked=True),
    "MutatingAdmissionPolicy": GateSpec(GA, True),
    # Admission policies loaded from files, `haru up --admission-manifests` (KEP-5793, alpha in 1.36)
    "ManifestBasedAdmissionControlConfig": GateSpec(ALPHA, False),
    "PodCertificateRequest": GateSpec(BETA, False),
    "StorageVersionAPI": GateSpec(ALPHA, False),
    "StorageVersionMigrator": GateSpec(BETA, False),
    "VolumeAttributesClass": GateSpec(GA, True, locked=True),
    # Workload-aware scheduling (api-1.36.md §1.1)
    "GangScheduling": GateSpec(ALPHA, False),
    "TopologyAwareWorkloadScheduling": GateSpec(ALPHA, False),
    "WorkloadAwarePreemption": GateSpec(ALPHA, False),
    "DRAWorkloadResourceClaims": GateSpec(ALPHA, False),
    "WorkloadWithJob": GateSpec(ALPHA, False),
    # DRA fields (api-1.36.md §2.2)
    "DRAAdminAccess": GateSpec(GA, True, locked=True),
    "DRAConsumableCapacity": GateSpec(BETA, True),
    "DRADeviceBindingConditions": GateSpec(BETA, True),
    "DRADeviceTaints": GateSpec(BETA, True),
    "DRAExtendedResource": GateSpec(BETA, True),
    "DRAListTypeAttributes": GateSpec(ALPHA, False),
    "DRANodeAllocatableResources": GateSpec(ALPHA, False),
    "DRAPartitionableDevices": GateSpec(BETA, True),
    "DRAPrioritizedList": GateSpec(GA, True),
    "DRAResourceClaimDeviceStatus": GateSpec(BETA, True),
    "DRASchedulerFilterTimeout": GateSpec(BETA, True),
    # Sharded list and watch (api-1.36.md §4)
    "ShardedListAndWatch": GateSpec(ALPHA, False),
    # User namespaces (api-1.36.md §5)
    "UserNamespacesSupport": GateSpec(GA, True),
    "UserNamespacesHostNetworkSupport": GateSpec(ALPHA, False),
    "UserNamespacesPodSecurityStandards": GateSpec(ALPHA, False),
    # The gitRepo volume plugin: off by default since 1.33, locked off in 1.36 (KEP-5040); the API
    # server refuses new gitRepo volumes (kinds/volume_policy.py)
    "GitRepoVolumeDriver": GateSpec(DEPRECATED, False, locked=True),
    # Device health in pod status (api-1.36.md §8; the upstream default is not verified there)
    "ResourceHealthStatus": GateSpec(BETA, False),
    "ResourceHealthStatusMessage": GateSpec(ALPHA, False),
}

DATA_FILE = os.path.join(os.path.dirname(__file__), "data", "feature-gates-1.36.json")


def _registered() -> Mapping[str, GateSpec]:
    """Every 1.36 gate: upstream's list, with haru's checked entries over it."""
    with open(DATA_FILE, "rb") as f:
        listed = json.load(f)["gates"]
    gates = {name: GateSpec(stage, default, locked) for name, (stage, default, locked) in listed.items()}
    gates.update(KNOWN)
    return types.MappingProxyType(gates)


# What `--feature-gates` accepts. A name outside it is refused with kube's "unrecognized feature gate".
REGISTERED: Mapping[str, GateSpec] = _registered()

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def _parse_bool(key: str, text: str) -> bool:
    # Go's strconv.ParseBool, with the error text kube-apiserver prints for a bad value.
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f'invalid value of {key}={text}, err: strconv.ParseBool: parsing "{text}": invalid syntax')


class FeatureGates:
    """The gate values of one process: haru's defaults with the flag's overrides applied."""

    def __init__(self, overrides: Mapping[str, bool] | None = None) -> None:
        values = {name: spec.haru_default for name, spec in REGISTERED.items()}
        overrides = dict(overrides or {})
        for switch, stage in ((ALL_ALPHA, ALPHA), (ALL_BETA, BETA)):
            if switch in overrides:
                value = overrides.pop(switch)
                for name, spec in REGISTERED.items():
                    if spec.stage == stage:
                        values[name] = value
        for name, value in overrides.items():
            spec = REGISTERED.get(name)
            if spec is None:
                raise ValueError(f"unrecognized feature gate: {name}")
            if spec.locked and value != spec.upstream_default:
                raise ValueError(
                    f"cannot set feature gate {name} to {_go_bool(value)}, "
                    f"feature is locked to {_go_bool(spec.upstream_default)}"
                )
            values[name] = value
        self._values = values

    @classmethod
    def parse(cls, text: str) -> FeatureGates:
        """Parse the kube-apiserver `--feature-gates` value; raise ValueError with upstream's text."""
        overrides: dict[str, bool] = {}
        for item in text.split(","):
            if not item:
                continue
            key, sep, raw = item.partition("=")
            key = key.strip()
            if not sep:
                raise ValueError(f"missing bool value for {key}")
            overrides[key] = _parse_bool(key, raw.strip())
        return cls(overrides)

    def enabled(self, name: str) -> bool:
        try:
            return self._values[name]
        except KeyError:
            # Upstream panics here: asking about an unregistered gate is a programming error.
            raise ValueError(f'feature "{name}" is not registered in FeatureGate') from None

    def as_dict(self) -> dict[str, bool]:
        return dict(self._values)

    def __str__(self) -> str:
        return ",".join(f"{name}={_go_bool(value)}" for name, value in sorted(self._values.items()))

    def __repr__(self) -> str:
        changed = {n: v for n, v in self._values.items() if v != REGISTERED[n].haru_default}
        return f"FeatureGates({changed!r})"


def metric_stage(name: str) -> str:
    """The `stage` label of `kubernetes_feature_enabled`: ALPHA, BETA, DEPRECATED, or "" for GA."""
    stage = REGISTERED[name].stage
    return "" if stage == GA else stage.upper()


def _go_bool(value: bool) -> str:
    return "true" if value else "false"
