"""The PodGroup strategy (scheduling.k8s.io/v1alpha2): its immutable fields plus the preemption fields' gate.

The immutable fields and the `disruptionMode: Pod` default are the table row in `fixed_fields.py`;
this class adds what needs the `WorkloadAwarePreemption` gate (set by `kinds.strategy_for`): with
the gate off, `disruptionMode`, `priorityClassName` and `priority` are dropped unless the stored
object already has them (upstream's dropDisabled…Fields), and with it on a `PodGroup` disruption
mode is refused for a `basic` group, which is never scheduled as a whole. The priority itself is
filled by the Priority admission plugin (`admission/plugins/priority.py`).
"""

from __future__ import annotations

from apiserver import features
from apiserver import validation as v
from apiserver.kinds import fixed_fields
from apiserver.strategy import Causes, Obj

GATE = "WorkloadAwarePreemption"
PREEMPTION_FIELDS = ("disruptionMode", "priorityClassName", "priority")
_BASE = fixed_fields.STRATEGIES[("scheduling.k8s.io", "podgroups")]


class PodGroupStrategy(_BASE):  # type: ignore[valid-type, misc]
    gates: features.FeatureGates | None = None

    def _enabled(self) -> bool:
        gates = self.gates if self.gates is not None else features.FeatureGates()
        return gates.enabled(GATE)

    def default(self, obj: Obj) -> None:
        # The disruptionMode default belongs to the gated field: no gate, no default.
        if self._enabled():
            super().default(obj)

    def _drop_disabled(self, obj: Obj, old: Obj | None) -> None:
        if self._enabled():
            return
        spec = obj.get("spec")
        old_spec = (old or {}).get("spec") or {}
        if not isinstance(spec, dict):
            return
        # Upstream keeps a disabled field only when the old object already used it.
        for name in PREEMPTION_FIELDS:
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
