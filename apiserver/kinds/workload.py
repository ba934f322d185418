"""The Workload strategy (scheduling.k8s.io/v1alpha2): its immutable fields plus the topology gate.

The immutable `controllerRef` and `podGroupTemplates` are the `fixed_fields.py` row; this class adds
upstream's dropDisabledFields for `TopologyAwareWorkloadScheduling` (set by `kinds.strategy_for`):
while it is off, each template's `schedulingConstraints` is dropped silently, unless the stored
Workload already has constraints (api-1.36.md §1.2-1.3). The PodGroup strategy does the same for
its own field (`podgroup.py`).
"""

from __future__ import annotations

from typing import Any

from apiserver import features
from apiserver.kinds import fixed_fields
from apiserver.strategy import Obj

GATE = "TopologyAwareWorkloadScheduling"
_BASE = fixed_fields.STRATEGIES[("scheduling.k8s.io", "workloads")]


def _templates(obj: Obj | None) -> list[Any]:
    spec = (obj or {}).get("spec")
    templates = spec.get("podGroupTemplates") if isinstance(spec, dict) else None
    return templates if isinstance(templates, list) else []


class WorkloadStrategy(_BASE):  # type: ignore[valid-type, misc]
    gates: features.FeatureGates | None = None

    def _drop_disabled(self, obj: Obj, old: Obj | None) -> None:
        gates = self.gates if self.gates is not None else features.FeatureGates()
        if gates.enabled(GATE):
            return
        # Upstream keeps the field when the old object already used it in any template.
        if any(isinstance(t, dict) and t.get("schedulingConstraints") is not None for t in _templates(old)):
            return
        for template in _templates(obj):
            if isinstance(template, dict):
                template.pop("schedulingConstraints", None)

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        self._drop_disabled(obj, None)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        self._drop_disabled(new, old)
