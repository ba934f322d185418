"""The chain haru runs: which plugins, in which order, over one cluster view.

`assemble(view, static)` builds the plugins once per API server and returns them with the
chain, so the server's follower task can reach the policy source (VAP status) and the quota
plugin (`status.used`). The order is upstream's (AllOrderedPlugins), limited to what haru has:
mutating LimitRanger, Priority, MutatingAdmissionPolicy; validating LimitRanger, Priority,
ValidatingAdmissionPolicy, ResourceQuota (which must come last: it reserves usage).
"""

from __future__ import annotations

from dataclasses import dataclass

from admission.chain import Chain, MutatingPlugin
from admission.plugins.limit_ranger import LimitRangerPlugin
from admission.plugins.priority import PriorityPlugin
from admission.plugins.resource_quota import ResourceQuotaPlugin
from admission.policy.mutating import MutatingPolicyPlugin
from admission.policy.source import PolicySource, StaticPolicies
from admission.policy.validating import ValidatingPolicyPlugin
from admission.view import ClusterView


@dataclass
class Assembly:
    chain: Chain
    policies: PolicySource
    quota: ResourceQuotaPlugin


def assemble(view: ClusterView, static: StaticPolicies | None = None, *, mutating_policies: bool = True) -> Assembly:
    policies = PolicySource(view, static)
    limits, priority, quota = LimitRangerPlugin(view), PriorityPlugin(view), ResourceQuotaPlugin(view)
    mutating: list[MutatingPlugin] = [limits, priority]
    if mutating_policies:
        mutating.append(MutatingPolicyPlugin(policies, view))
    chain = Chain(mutating, [limits, priority, ValidatingPolicyPlugin(policies, view), quota])
    return Assembly(chain, policies, quota)
