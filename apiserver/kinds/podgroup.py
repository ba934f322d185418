"""The PodGroup strategy (scheduling.k8s.io/v1alpha2): its immutable fields plus its gated fields.

The immutable fields and the `disruptionMode: Pod` default are the `fixed_fields.py` row; this
class adds the gated fields (gates set by `kinds.strategy_for`): `disruptionMode`, `priorityClassName`
and `priority` go while `WorkloadAwarePreemption` is off, `schedulingConstraints` while
`TopologyAwareWorkloadScheduling` is, unless the stored object has them (upstream's dropDisabled…Fields);
with the first on, a `PodGroup` disruption mode is refused for a `basic` group. The priority itself
comes from the Priority admission plugin (`admission/plugins/priority.py`).
"""

from __future__ import annotations

from apiserver import features
from apiserver import validation as v
from apiserver.kinds import fixed_fields
from apiserver.strategy import Causes, Obj

GATE = "WorkloadAwarePreemption"
PREEMPTION_FIELDS = ("disruptionMode", "priorityClassName", "priority")
GATED_FIELDS = {GATE: PREEMPTION_FIELDS, "TopologyAwareWorkloadScheduling": ("schedulingConstraints",)}
_BASE = fixed_fields.STRATEGIES[("scheduling.k8s.io", "podgroups")]


class PodGroupStrategy(_BASE):  # type: ignore[valid-type, misc]
    gates: features.FeatureGates | None = None

    def _enabled(self, gate: str = GATE) -> bool:
        gates = self.gates if self.gates is not None else features.FeatureGates()
        return gates.enabled(gate)

    def default(self, obj: Obj) -> None:
        # The disruptionMode default belongs to the gated field: no gate, no default.
        if self._enabled():
            super().default(obj)

    def _drop_disabled(self, obj: Obj, old: Obj | None) -> None:
        spec = obj.get("spec")
        old_spec = (old or {}).get("spec") or {}
        if not isinstance(spec, dict):
            return
        for gate, fields in GATED_FIELDS.items():
            if self._enabled(gate):
                continue
            # Upstream keeps a disabled field only when the old object already used it.
            for name in fields:
                if old_spec.get(name) is None:
                    spec.pop(name, None)

    def prepare_for_create(self, obj: Obj) -> None:
        super().prepare_for_create(obj)
        self._drop_disabled(obj, None)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        self._drop_disabled(new, old)

    def validate(self, obj: Obj) -> Causes:
        causes: Causes = super().validate(obj)
        spec = obj.get("spec") or {}
        policy = spec.get("schedulingPolicy") or {}
        if spec.get("disruptionMode") == "PodGroup" and "basic" in policy and "gang" not in policy:
            causes.append(v.invalid("spec.disruptionMode", "PodGroup",
                                    "PodGroup disruption mode is not supported for pod groups with basic "
                                    "scheduling policy"))
        return causes
