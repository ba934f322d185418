"""The chain haru runs: which plugins, in which order, over one cluster view.

`assemble(view, static)` builds the plugins once per API server and returns them with the
chain, so the server's follower task can reach the policy source (VAP status) and the quota
plugin (`status.used`). The order is upstream's (AllOrderedPlugins), limited to what haru has:
mutating LimitRanger, ServiceAccount, NodeRestriction (always on, as kubeadm enables it; it judges
kubelets' requests alone), Priority, RuntimeClass, MutatingAdmissionPolicy; validating LimitRanger,
ServiceAccount, NodeRestriction, Priority, RuntimeClass, JobValidation (while `job_validation`:
GenericWorkload or WorkloadWithJob is on), ValidatingAdmissionPolicy, ResourceQuota (which must come last: it reserves usage).
ServiceAccount is in `OPTIONAL`: it runs when `enable` names it (`haru up` does; an API server
started without controllers, as most tests do, has no accounts to find).
"""

from __future__ import annotations

from dataclasses import dataclass

from admission.chain import Chain, MutatingPlugin
from admission.plugins.job_validation import JobValidationPlugin
from admission.plugins.limit_ranger import LimitRangerPlugin
from admission.plugins.node_restriction import NodeRestrictionPlugin
from admission.plugins.priority import PriorityPlugin
from admission.plugins.resource_quota import ResourceQuotaPlugin
from admission.plugins.runtime_class import RuntimeClassPlugin
from admission.plugins.service_account import ServiceAccountPlugin
from admission.policy.mutating import MutatingPolicyPlugin
from admission.policy.source import PolicySource, StaticPolicies
from admission.policy.validating import ValidatingPolicyPlugin
from admission.view import ClusterView

OPTIONAL = ("ServiceAccount",)


@dataclass
class Assembly:
    chain: Chain
    policies: PolicySource
    quota: ResourceQuotaPlugin


def assemble(view: ClusterView, static: StaticPolicies | None = None, *, mutating_policies: bool = True,
             enable: frozenset[str] = frozenset(), pod_group_priority: bool = False,
             job_validation: bool = True) -> Assembly:
    """`pod_group_priority`: the WorkloadAwarePreemption gate, under which Priority also resolves PodGroups'."""
    policies = PolicySource(view, static)
    priority = PriorityPlugin(view, pod_groups=pod_group_priority)
    limits, quota = LimitRangerPlugin(view), ResourceQuotaPlugin(view)
    accounts = [ServiceAccountPlugin(view)] if "ServiceAccount" in enable else []
    nodes = NodeRestrictionPlugin(view)
    runtime_classes = RuntimeClassPlugin(view)
    mutating: list[MutatingPlugin] = [limits, *accounts, nodes, priority, runtime_classes]
    if mutating_policies:
        mutating.append(MutatingPolicyPlugin(policies, view))
    jobs = [JobValidationPlugin(view)] if job_validation else []
    # NodeRestriction changes nothing; it judges writes in the mutating half, as upstream, and
    # deletes in the validating one (haru runs only that half for a delete).
    chain = Chain(mutating, [limits, *accounts, nodes, priority, runtime_classes, *jobs,
                             ValidatingPolicyPlugin(policies, view), quota])
    return Assembly(chain, policies, quota)
