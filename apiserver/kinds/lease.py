"""Leases (coordination.k8s.io/v1): the spec checks of ValidateLeaseSpec.

leaseDurationSeconds > 0, leaseTransitions >= 0, a strategy upstream knows (or a qualified
custom one), and preferredHolder only together with a strategy.
"""

from __future__ import annotations

from apiserver import validation as v
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj

_STRATEGIES = ["OldestEmulationVersion"]


class LeaseStrategy(DefaultingStrategy):
    def validate(self, obj: Obj) -> Causes:
        causes = super().validate(obj)
        spec = obj.get("spec") or {}
        duration, transitions = spec.get("leaseDurationSeconds"), spec.get("leaseTransitions")
        if duration is not None and duration <= 0:
            causes.append(v.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
        if transitions is not None and transitions < 0:
            causes.append(v.invalid("spec.leaseTransitions", transitions, v.NEGATIVE))
        strategy = spec.get("strategy")
        if strategy is not None:
            if "/" in strategy:
                causes += [v.invalid("spec.strategy", strategy, m) for m in v.qualified_name(strategy)]
            elif strategy not in _STRATEGIES:
                causes.append(v.not_supported("spec.strategy", strategy, _STRATEGIES))
        if spec.get("preferredHolder") and not strategy:
            causes.append(v.forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
        return causes
