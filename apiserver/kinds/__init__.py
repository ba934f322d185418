"""The per-kind strategies: one table from (group, resource) to a Strategy class and name rule.

`strategy_for(group, resource, namespaced=..., has_status=...)` is what the handlers call
(`apiserver/context.py`); a resource not in the table gets the generic `strategy.Strategy`,
which is right for kinds without special rules. Subresource strategies come from the main
strategy: `status_strategy()`, `finalize_strategy()` (namespaces), `approval_strategy()` (CSRs),
`ephemeralcontainers_strategy()` and `resize_strategy()` (pods); "pods/resize"-style names are
accepted here too. Name rules are upstream's ValidateXName: DNS-1123 subdomain unless listed —
DNS label for namespaces, DNS-1035 label for services, path segment for RBAC objects and core/v1
events. Custom resources get
`crds.strategy.CustomResourceStrategy` over the definition `crds.served` holds for them. Kinds
whose rules read a namespace (DRA admin access) get the server's lookup as `namespaces`.
"""

from __future__ import annotations

from typing import Any

from apiserver.kinds import (
    admission_policies, admin_access, certificates, configmap, cronjob, daemonset, deployment, event, fixed_fields,
    horizontalpodautoscaler, job, lease, namespace, node, persistentvolume, persistentvolumeclaim, pod, podgroup,
    podtemplate, priorityclass, replicaset, resourceclaim, resourceslice, secret, service, statefulset, workload,
)
from apiserver.crds import crd_strategy, served
from apiserver.crds.strategy import CustomResourceStrategy
from apiserver.strategy import Strategy

# (group, resource) → (strategy class, name rule). "subdomain" is the default rule.
TABLE: dict[tuple[str, str], tuple[type[Strategy], str]] = {
    ("", "pods"): (pod.PodStrategy, "subdomain"),
    ("", "podtemplates"): (podtemplate.PodTemplateStrategy, "subdomain"),
    ("", "namespaces"): (namespace.NamespaceStrategy, "label"),
    ("", "services"): (service.ServiceStrategy, "dns1035"),
    ("", "configmaps"): (configmap.ConfigMapStrategy, "subdomain"),
    ("", "secrets"): (secret.SecretStrategy, "subdomain"),
    ("", "serviceaccounts"): (Strategy, "subdomain"),
    ("", "events"): (event.CoreEventStrategy, "path"),
    ("", "persistentvolumeclaims"): (persistentvolumeclaim.PersistentVolumeClaimStrategy, "subdomain"),
    ("", "persistentvolumes"): (persistentvolume.PersistentVolumeStrategy, "subdomain"),
    ("", "nodes"): (node.NodeStrategy, "subdomain"),
    ("events.k8s.io", "events"): (event.EventsV1Strategy, "subdomain"),
    ("apps", "deployments"): (deployment.DeploymentStrategy, "subdomain"),
    ("apps", "replicasets"): (replicaset.ReplicaSetStrategy, "subdomain"),
    ("apps", "statefulsets"): (statefulset.StatefulSetStrategy, "subdomain"),
    ("apps", "daemonsets"): (daemonset.DaemonSetStrategy, "subdomain"),
    ("batch", "jobs"): (job.JobStrategy, "subdomain"),
    ("batch", "cronjobs"): (cronjob.CronJobStrategy, "subdomain"),
    ("autoscaling", "horizontalpodautoscalers"): (horizontalpodautoscaler.HorizontalPodAutoscalerStrategy, "subdomain"),
    ("certificates.k8s.io", "certificatesigningrequests"): (certificates.CertificateSigningRequestStrategy, "path"),
    ("coordination.k8s.io", "leases"): (lease.LeaseStrategy, "subdomain"),
    ("scheduling.k8s.io", "priorityclasses"): (priorityclass.PriorityClassStrategy, "subdomain"),
    ("rbac.authorization.k8s.io", "roles"): (Strategy, "path"),
    ("rbac.authorization.k8s.io", "clusterroles"): (Strategy, "path"),
    ("rbac.authorization.k8s.io", "rolebindings"): (fixed_fields.RoleBindingStrategy, "path"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): (fixed_fields.RoleBindingStrategy, "path"),
    ("resource.k8s.io", "resourceclaims"): (resourceclaim.ResourceClaimStrategy, "subdomain"),
    ("resource.k8s.io", "resourceclaimtemplates"): (resourceclaim.ResourceClaimTemplateStrategy, "subdomain"),
    ("apiextensions.k8s.io", "customresourcedefinitions"): (crd_strategy.CustomResourceDefinitionStrategy, "subdomain"),
    **{key: (cls, "subdomain") for key, cls in admission_policies.STRATEGIES.items()},
    **{key: (cls, "subdomain") for key, cls in fixed_fields.STRATEGIES.items()},
    # After the fixed-fields rows: PodGroup's and Workload's rows there are these strategies' bases.
    ("scheduling.k8s.io", "podgroups"): (podgroup.PodGroupStrategy, "subdomain"),
    ("scheduling.k8s.io", "workloads"): (workload.WorkloadStrategy, "subdomain"),
    ("resource.k8s.io", "resourceslices"): (resourceslice.ResourceSliceStrategy, "subdomain"),
}


def strategy_for(group: str, resource: str, *, namespaced: bool, has_status: bool,
                 namespaces: admin_access.NamespaceLookup | None = None, gates: Any = None) -> Strategy:
    """The strategy of a resource, or of "resource/subresource" (status, finalize, ephemeralcontainers, resize).

    `namespaces` looks a namespace up by name (the server's cache); without it, strategies that need
    one report it as not found."""
    resource, _, subresource = resource.partition("/")
    custom = served.lookup(group, resource) if (group, resource) not in TABLE else None
    if custom is not None:
        main: Strategy = CustomResourceStrategy(custom, namespaced=namespaced, has_status=has_status)
    else:
        cls, name_rule = TABLE.get((group, resource), (Strategy, "subdomain"))
        main = cls(namespaced=namespaced, has_status=has_status, name_rule=name_rule)
        if isinstance(main, resourceclaim.NamespaceReading):
            main.namespaces = namespaces
        if isinstance(main, horizontalpodautoscaler.HorizontalPodAutoscalerStrategy):
            main.gates = gates  # HPAScaleToZero decides the lowest minReplicas
        if isinstance(main, (podgroup.PodGroupStrategy, workload.WorkloadStrategy)):
            main.gates = gates  # the gates that keep or drop its preemption and topology fields
        if isinstance(main, pod.PodStrategy):
            main.gates = gates  # UserNamespacesHostNetworkSupport lets hostUsers: false use hostNetwork
    if not subresource:
        return main
    factory = getattr(main, f"{subresource}_strategy", None)
    if factory is None:
        raise LookupError(f"{group}/{resource} has no strategy for the {subresource} subresource")
    result: Strategy = factory()
    return result
