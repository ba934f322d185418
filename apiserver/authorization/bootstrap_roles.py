"""Upstream's default RBAC policy as data: the ClusterRoles, Roles and bindings kube-apiserver creates.

Written by hand from kubernetes' plugin/pkg/auth/authorizer/rbac/bootstrappolicy (policy.go,
controller_policy.go, namespace_policy.go) for 1.36: names, rules (verbs and resources sorted, as
upstream's rule builder stores them), aggregation labels and selectors. `bootstrap_policy.py`
turns these tuples into objects and seeds them; nothing else reads this module.
"""

from __future__ import annotations

from typing import Any

READ = ("get", "list", "watch")
READ_WRITE = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
WRITE = ("create", "delete", "deletecollection", "patch", "update")
READ_UPDATE = ("get", "list", "watch", "update", "patch")


def rule(verbs: tuple[str, ...] | str, groups: tuple[str, ...] | str, resources: tuple[str, ...] | str,
         names: tuple[str, ...] = ()) -> dict[str, Any]:
    verbs = (verbs,) if isinstance(verbs, str) else verbs
    groups = (groups,) if isinstance(groups, str) else groups
    resources = (resources,) if isinstance(resources, str) else resources
    out: dict[str, Any] = {"verbs": sorted(set(verbs)), "apiGroups": list(groups), "resources": sorted(set(resources))}
    if names:
        out["resourceNames"] = sorted(set(names))
    return out


def urls(verbs: tuple[str, ...] | str, paths: tuple[str, ...]) -> dict[str, Any]:
    verbs = (verbs,) if isinstance(verbs, str) else verbs
    return {"verbs": sorted(set(verbs)), "nonResourceURLs": sorted(set(paths))}


EVENTS = rule(("create", "patch", "update"), ("", "events.k8s.io"), "events")

_VIEW = [
    rule(READ, "", ("pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
                    "services/status", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status",
                    "configmaps")),
    rule(READ, "", ("limitranges", "resourcequotas", "bindings", "events", "pods/status", "resourcequotas/status",
                    "namespaces/status", "replicationcontrollers/status", "pods/log")),
    rule(READ, "", "namespaces"),
    rule(READ, "discovery.k8s.io", "endpointslices"),
    rule(READ, "apps", ("controllerrevisions", "statefulsets", "statefulsets/scale", "statefulsets/status",
                        "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
                        "replicasets", "replicasets/scale", "replicasets/status")),
    rule(READ, "autoscaling", ("horizontalpodautoscalers", "horizontalpodautoscalers/status")),
    rule(READ, "batch", ("jobs", "cronjobs", "cronjobs/status", "jobs/status")),
    rule(READ, "extensions", ("daemonsets", "daemonsets/status", "deployments", "deployments/scale",
                              "deployments/status", "ingresses", "ingresses/status", "replicasets", "replicasets/scale",
                              "replicasets/status", "replicationcontrollers/scale", "networkpolicies")),
    rule(READ, "policy", ("poddisruptionbudgets", "poddisruptionbudgets/status")),
    rule(READ, "networking.k8s.io", ("ingresses", "ingresses/status", "networkpolicies")),
]

_EDIT = [
    rule(READ, "", ("pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy")),
    rule("impersonate", "", "serviceaccounts"),
    rule(WRITE, "", ("pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward")),
    rule("create", "", "pods/eviction"),
    rule(WRITE, "", ("replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
                     "services/proxy", "persistentvolumeclaims", "configmaps", "secrets", "events")),
    rule("create", "", "serviceaccounts/token"),
    rule(WRITE, "apps", ("statefulsets", "statefulsets/scale", "daemonsets", "deployments", "deployments/scale",
                         "deployments/rollback", "replicasets", "replicasets/scale")),
    rule(WRITE, "autoscaling", "horizontalpodautoscalers"),
    rule(WRITE, "batch", ("jobs", "cronjobs")),
    rule(WRITE, "extensions", ("daemonsets", "deployments", "deployments/scale", "deployments/rollback", "ingresses",
                               "replicasets", "replicasets/scale", "replicationcontrollers/scale", "networkpolicies")),
    rule(WRITE, "policy", "poddisruptionbudgets"),
    rule(WRITE, "networking.k8s.io", ("ingresses", "networkpolicies")),
    rule(READ_WRITE, "coordination.k8s.io", "leases"),
]

_ADMIN = [
    rule("create", "authorization.k8s.io", "localsubjectaccessreviews"),
    rule(READ_WRITE, "rbac.authorization.k8s.io", ("roles", "rolebindings")),
]

AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-"

# name → (rules, extra labels, aggregate-from label suffix or None)
CLUSTER_ROLES: list[tuple[str, list[dict[str, Any]], dict[str, str], str | None]] = [
    ("cluster-admin", [rule("*", "*", "*"), urls("*", ("*",))], {}, None),
    ("system:discovery", [urls("get", ("/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                                       "/openapi/*", "/readyz", "/version", "/version/"))], {}, None),
    ("system:monitoring", [urls("get", ("/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis",
                                        "/readyz", "/readyz/*"))], {}, None),
    ("system:basic-user", [rule("create", "authorization.k8s.io", ("selfsubjectaccessreviews", "selfsubjectrulesreviews")),
                           rule("create", "authentication.k8s.io", "selfsubjectreviews")], {}, None),
    ("system:public-info-viewer", [urls("get", ("/healthz", "/livez", "/readyz", "/version", "/version/"))], {}, None),
    ("admin", [], {}, "admin"),
    ("edit", [], {AGGREGATE + "admin": "true"}, "edit"),
    ("view", [], {AGGREGATE + "edit": "true"}, "view"),
    ("system:aggregate-to-admin", _ADMIN, {AGGREGATE + "admin": "true"}, None),
    ("system:aggregate-to-edit", _EDIT, {AGGREGATE + "edit": "true"}, None),
    ("system:aggregate-to-view", _VIEW, {AGGREGATE + "view": "true"}, None),
    ("system:heapster", [rule(READ, "", ("events", "pods", "nodes", "namespaces")),
                         rule(READ, "extensions", "deployments")], {}, None),
    # NodeRules(): the Node authorizer's static rules (node.py); no ClusterRoleBinding grants them.
    ("system:node", [
        rule("create", "authentication.k8s.io", "tokenreviews"),
        rule("create", "authorization.k8s.io", ("subjectaccessreviews", "localsubjectaccessreviews")),
        rule(READ, "", "services"),
        rule(("create", "get", "list", "watch"), "", "nodes"),
        rule(("update", "patch"), "", "nodes/status"),
        rule(("update", "patch"), "", "nodes"),
        rule(("create", "update", "patch"), "", "events"),
        rule(READ, "", "pods"),
        rule(("create", "delete"), "", "pods"),
        rule(("update", "patch"), "", "pods/status"),
        rule("create", "", "pods/eviction"),
        rule(READ, "", ("secrets", "configmaps")),
        rule("get", "", ("persistentvolumeclaims", "persistentvolumes")),
        rule("get", "", "endpoints"),
        rule(("create", "get", "list", "watch"), "certificates.k8s.io", "certificatesigningrequests"),
        rule(("delete", "get", "update", "create", "patch"), "coordination.k8s.io", "leases"),
        rule("get", "storage.k8s.io", "volumeattachments"),
        rule("create", "", "serviceaccounts/token"),
        rule(("get", "update", "patch"), "", "persistentvolumeclaims/status"),
        rule(READ, "storage.k8s.io", "csidrivers"),
        rule(("get", "create", "update", "patch", "delete"), "storage.k8s.io", "csinodes"),
        rule(READ, "node.k8s.io", "runtimeclasses"),
        # DynamicResourceAllocation (GA, locked on): the claims of its pods, and cleaning up the
        # node's ResourceSlices; the Node authorizer scopes both to this node.
        rule("get", "resource.k8s.io", "resourceclaims"),
        rule("deletecollection", "resource.k8s.io", "resourceslices"),
    ], {}, None),
    ("system:node-problem-detector", [rule("get", "", "nodes"), rule("patch", "", "nodes/status"), EVENTS], {}, None),
    ("system:kubelet-api-admin", [rule(("get", "list", "watch", "proxy"), "", "nodes"),
                                  rule("*", "", ("nodes/log", "nodes/metrics", "nodes/proxy", "nodes/stats",
                                                 "nodes/configz", "nodes/healthz", "nodes/pods"))], {}, None),
    ("system:node-bootstrapper", [rule(("create", "get", "list", "watch"), "certificates.k8s.io",
                                       "certificatesigningrequests")], {}, None),
    ("system:auth-delegator", [rule("create", "authentication.k8s.io", "tokenreviews"),
                               rule("create", "authorization.k8s.io", "subjectaccessreviews")], {}, None),
    ("system:kube-aggregator", [rule(READ, "", ("services", "endpoints"))], {}, None),
    ("system:kube-controller-manager", [
        EVENTS,
        rule("create", "coordination.k8s.io", "leases"),
        rule(("get", "update"), "coordination.k8s.io", "leases", ("kube-controller-manager",)),
        rule("create", "", ("secrets", "serviceaccounts")),
        rule("delete", "", "secrets"),
        rule("get", "", ("namespaces", "secrets", "serviceaccounts", "configmaps")),
        rule("update", "", ("secrets", "serviceaccounts")),
        rule("create", "authentication.k8s.io", "tokenreviews"),
        rule("create", "authorization.k8s.io", "subjectaccessreviews"),
        rule(("list", "watch"), "*", "*"),
        rule("create", "", "serviceaccounts/token"),
    ], {}, None),
    ("system:kube-dns", [rule(("list", "watch"), "", ("endpoints", "services"))], {}, None),
    ("system:persistent-volume-provisioner", [
        rule(("create", "delete", "get", "list", "watch"), "", "persistentvolumes"),
        rule(("get", "list", "watch", "update"), "", "persistentvolumeclaims"),
        rule(READ, "storage.k8s.io", "storageclasses"),
        rule(("watch", "create", "update", "patch"), "", "events"),
    ], {}, None),
    ("system:kube-scheduler", [
        EVENTS,
        rule("create", "coordination.k8s.io", "leases"),
        rule(("get", "update"), "coordination.k8s.io", "leases", ("kube-scheduler",)),
        rule(READ, "", "nodes"),
        rule(("delete", "get", "list", "watch"), "", "pods"),
        rule("create", "", ("pods/binding", "bindings")),
        rule(("patch", "update"), "", "pods/status"),
        rule(READ, "", ("replicationcontrollers", "services")),
        rule(READ, ("apps", "extensions"), "replicasets"),
        rule(READ, "apps", "statefulsets"),
        rule(READ, "policy", "poddisruptionbudgets"),
        rule(READ, "", ("persistentvolumeclaims", "persistentvolumes")),
        rule("create", "authentication.k8s.io", "tokenreviews"),
        rule("create", "authorization.k8s.io", "subjectaccessreviews"),
        rule(READ, "storage.k8s.io", ("csinodes", "csidrivers", "csistoragecapacities")),
        rule(READ, "", "namespaces"),
        # DynamicResourceAllocation: the claim's finalizer is an update of the claim itself, the
        # allocation one of its status; DRAExtendedResource (beta, on) creates and deletes the
        # claims of extended resources; DRADeviceTaints (beta, on) reads DeviceTaintRules.
        rule(READ_UPDATE, "resource.k8s.io", ("resourceclaims", "resourceclaims/status")),
        rule(READ, "resource.k8s.io", ("deviceclasses", "resourceslices")),
        rule(("create", "delete"), "resource.k8s.io", "resourceclaims"),
        rule(READ, "resource.k8s.io", "devicetaintrules"),
        rule(READ, "scheduling.k8s.io", ("workloads", "podgroups")),
        rule(("patch", "update"), "scheduling.k8s.io", "podgroups/status"),
    ], {}, None),
    ("system:node-proxier", [rule(("list", "watch"), "", ("services", "endpoints")),
                             rule(READ, "", "nodes"), EVENTS,
                             rule(("list", "watch"), "discovery.k8s.io", "endpointslices")], {}, None),
    ("system:volume-scheduler", [rule(("get", "list", "patch", "update", "watch"), "", "persistentvolumes"),
                                 rule(READ, "storage.k8s.io", "storageclasses"),
                                 rule(("get", "list", "patch", "update", "watch"), "", "persistentvolumeclaims")],
     {}, None),
    ("system:certificates.k8s.io:certificatesigningrequests:nodeclient",
     [rule("create", "certificates.k8s.io", "certificatesigningrequests/nodeclient")], {}, None),
    ("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
     [rule("create", "certificates.k8s.io", "certificatesigningrequests/selfnodeclient")], {}, None),
    ("system:certificates.k8s.io:kube-apiserver-client-approver",
     [rule("approve", "certificates.k8s.io", "signers", ("kubernetes.io/kube-apiserver-client",))], {}, None),
    ("system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
     [rule("approve", "certificates.k8s.io", "signers", ("kubernetes.io/kube-apiserver-client-kubelet",))], {}, None),
    ("system:certificates.k8s.io:kubelet-serving-approver",
     [rule("approve", "certificates.k8s.io", "signers", ("kubernetes.io/kubelet-serving",))], {}, None),
    ("system:certificates.k8s.io:legacy-unknown-approver",
     [rule("approve", "certificates.k8s.io", "signers", ("kubernetes.io/legacy-unknown",))], {}, None),
    ("system:service-account-issuer-discovery",
     [urls("get", ("/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/openid/v1/jwks",
                   "/openid/v1/jwks/"))], {}, None),
]

# name → [(kind, name, namespace)]
CLUSTER_ROLE_BINDINGS: list[tuple[str, list[tuple[str, str, str]]]] = [
    ("cluster-admin", [("Group", "system:masters", "")]),
    ("system:monitoring", [("Group", "system:monitoring", "")]),
    ("system:discovery", [("Group", "system:authenticated", "")]),
    ("system:basic-user", [("Group", "system:authenticated", "")]),
    ("system:public-info-viewer", [("Group", "system:authenticated", ""), ("Group", "system:unauthenticated", "")]),
    ("system:node-proxier", [("User", "system:kube-proxy", "")]),
    ("system:kube-controller-manager", [("User", "system:kube-controller-manager", "")]),
    ("system:kube-dns", [("ServiceAccount", "kube-dns", "kube-system")]),
    ("system:kube-scheduler", [("User", "system:kube-scheduler", "")]),
    ("system:volume-scheduler", [("User", "system:kube-scheduler", "")]),
    ("system:node", []),
    ("system:service-account-issuer-discovery", [("Group", "system:serviceaccounts", "")]),
]

# The controller-manager's per-controller roles (controller_policy.go), each bound to the
# service account of that name in kube-system as system:controller:<name>.
CONTROLLER_ROLES: list[tuple[str, list[dict[str, Any]]]] = [
    ("attachdetach-controller", [
        rule(("list", "watch"), "", ("persistentvolumes", "persistentvolumeclaims")),
        rule(("get", "list", "watch"), "", "nodes"), rule(("patch", "update"), "", "nodes/status"),
        rule(("list", "watch"), "", "pods"), EVENTS,
        rule(("create", "delete", "get", "list", "watch"), "storage.k8s.io", "volumeattachments"),
        rule(("get", "list", "watch"), "storage.k8s.io", ("csidrivers", "csinodes"))]),
    ("clusterrole-aggregation-controller", [rule(("escalate", "get", "list", "patch", "update", "watch"),
                                                 "rbac.authorization.k8s.io", "clusterroles")]),
    ("cronjob-controller", [
        rule(("get", "list", "watch", "update"), "batch", "cronjobs"),
        rule(("get", "list", "watch", "create", "update", "delete", "patch"), "batch", "jobs"),
        rule("update", "batch", "cronjobs/status"), rule("update", "batch", "cronjobs/finalizers"),
        rule(("list", "delete"), "", "pods"), EVENTS]),
    ("daemon-set-controller", [
        rule(("get", "list", "watch"), ("extensions", "apps"), "daemonsets"),
        rule("update", ("extensions", "apps"), "daemonsets/status"),
        rule("update", ("extensions", "apps"), "daemonsets/finalizers"),
        rule(("list", "watch"), "", "nodes"),
        rule(("list", "watch", "create", "delete", "patch"), "", "pods"),
        rule("create", "", "pods/binding"),
        rule(("get", "list", "watch", "create", "delete", "update", "patch"), "apps", "controllerrevisions"),
        EVENTS]),
    ("deployment-controller", [
        rule(("get", "list", "watch", "update"), ("extensions", "apps"), "deployments"),
        rule("update", ("extensions", "apps"), ("deployments/status", "deployments/finalizers")),
        rule(("get", "list", "watch", "create", "update", "patch", "delete"), ("apps", "extensions"), "replicasets"),
        rule(("get", "list", "watch", "update"), "", "pods"), EVENTS]),
    ("disruption-controller", [
        rule(("get", "list", "watch"), ("extensions", "apps"), "deployments"),
        rule(("get", "list", "watch"), ("apps", "extensions"), "replicasets"),
        rule(("get", "list", "watch"), "", "replicationcontrollers"),
        rule(("get", "list", "watch"), "policy", "poddisruptionbudgets"),
        rule(("get", "list", "watch"), "apps", "statefulsets"),
        rule("update", "policy", "poddisruptionbudgets/status"),
        rule("get", "*", "*/scale"), rule(("patch", "update"), "", "pods/status"), EVENTS]),
    ("endpoint-controller", [
        rule(("get", "list", "watch"), "", ("services", "pods")),
        rule(("get", "list", "watch", "create", "update", "delete"), "", "endpoints"),
        rule("create", "", "endpoints/restricted"), EVENTS]),
    ("endpointslice-controller", [
        rule(("get", "list", "watch"), "", ("services", "pods", "nodes")),
        rule("update", "", "services/finalizers"),
        rule(("get", "list", "watch", "create", "update", "delete"), "discovery.k8s.io", "endpointslices"), EVENTS]),
    ("endpointslicemirroring-controller", [
        rule(("get", "list", "watch"), "", ("services", "endpoints")),
        rule("update", "", ("services/finalizers", "endpoints/finalizers")),
        rule(("get", "list", "watch", "create", "update", "delete"), "discovery.k8s.io", "endpointslices"), EVENTS]),
    ("ephemeral-volume-controller", [
        rule(("get", "list", "watch"), "", "pods"), rule("update", "", "pods/finalizers"),
        rule(("get", "list", "watch", "create"), "", "persistentvolumeclaims"), EVENTS]),
    ("expand-controller", [
        rule(("get", "list", "watch", "update", "patch"), "", "persistentvolumes"),
        rule(("update", "patch"), "", "persistentvolumeclaims/status"),
        rule(("get", "list", "watch"), "", "persistentvolumeclaims"),
        rule(("get", "list", "watch"), "storage.k8s.io", "storageclasses"),
        rule("get", "", ("endpoints", "services")), rule("get", "", "secrets"), EVENTS]),
    ("generic-garbage-collector", [rule(("get", "list", "watch", "patch", "update", "delete"), "*", "*"), EVENTS]),
    ("horizontal-pod-autoscaler", [
        rule(("get", "list", "watch"), "autoscaling", "horizontalpodautoscalers"),
        rule("update", "autoscaling", "horizontalpodautoscalers/status"),
        rule(("get", "update"), "*", "*/scale"), rule(("list", "watch"), "", "pods"),
        rule(("list", "watch"), "metrics.k8s.io", "pods"),
        rule(("get", "list", "watch"), "custom.metrics.k8s.io", "*"),
        rule(("get", "list", "watch"), "external.metrics.k8s.io", "*"), EVENTS]),
    ("job-controller", [
        rule(("get", "list", "watch", "update", "patch"), "batch", "jobs"),
        rule("update", "batch", ("jobs/status", "jobs/finalizers")),
        rule(("list", "watch", "create", "delete", "patch"), "", "pods"), EVENTS,
        # WorkloadWithJob (KEP-5547, alpha in 1.36): a gang-shaped Job's Workload and PodGroup,
        # created once (1.37 adds update and patch, when the controller starts changing them).
        rule(("get", "list", "watch", "create"), "scheduling.k8s.io", ("workloads", "podgroups"))]),
    ("namespace-controller", [
        rule(("get", "list", "watch", "delete"), "", "namespaces"),
        rule("update", "", ("namespaces/finalize", "namespaces/status")),
        rule(("get", "list", "delete", "deletecollection"), "*", "*")]),
    # Also the taint-eviction controller's (upstream gives it the node controller's client).
    ("node-controller", [
        rule(("get", "list", "watch", "update", "delete", "patch"), "", "nodes"),
        rule(("patch", "update"), "", "nodes/status"),
        rule(("patch", "update"), "", "pods/status"),
        rule(("list", "watch", "get", "delete"), "", "pods"), EVENTS]),
    ("persistent-volume-binder", [
        rule(("get", "list", "watch", "update", "create", "delete"), "", "persistentvolumes"),
        rule("update", "", "persistentvolumes/status"),
        rule(("get", "list", "watch", "update"), "", "persistentvolumeclaims"),
        rule("update", "", "persistentvolumeclaims/status"),
        rule(("list", "watch", "get", "create", "delete"), "", "pods"),
        rule(("get", "list", "watch"), "storage.k8s.io", "storageclasses"),
        rule(("list", "watch"), "", "nodes"), EVENTS,
        rule("watch", "", "events"),  # the recycler watches its pod's events
        rule("get", "", "services")]),  # the portworx volume plugin
    ("pod-garbage-collector", [
        rule(("list", "watch", "delete"), "", "pods"), rule(("get", "list", "watch"), "", "nodes"),
        rule("patch", "", "pods/status")]),
    ("replicaset-controller", [
        rule(("get", "list", "watch", "update"), ("apps", "extensions"), "replicasets"),
        rule("update", ("apps", "extensions"), ("replicasets/status", "replicasets/finalizers")),
        rule(("list", "watch", "patch", "create", "delete"), "", "pods"), EVENTS]),
    ("replication-controller", [
        rule(("get", "list", "watch", "update"), "", "replicationcontrollers"),
        rule("update", "", ("replicationcontrollers/status", "replicationcontrollers/finalizers")),
        rule(("list", "watch", "patch", "create", "delete"), "", "pods"), EVENTS]),
    ("resourcequota-controller", [rule(("list", "watch"), "*", "*"),
                                  rule("update", "", "resourcequotas/status"), EVENTS]),
    ("route-controller", [rule("list", "", "nodes"), rule("patch", "", "nodes/status"), EVENTS]),
    ("service-account-controller", [rule("create", "", "serviceaccounts"), EVENTS]),
    ("service-controller", [
        rule(("get", "list", "watch"), "", "services"), rule(("patch", "update"), "", "services/status"),
        rule(("list", "watch"), "", "nodes"), EVENTS]),
    ("statefulset-controller", [
        rule(("list", "watch"), "", "pods"),
        rule(("get", "list", "watch"), "apps", "statefulsets"),
        rule("update", "apps", ("statefulsets/status", "statefulsets/finalizers")),
        rule(("get", "create", "delete", "update", "patch"), "", "pods"),
        rule(("get", "create", "delete", "update", "patch", "list", "watch"), "apps", "controllerrevisions"),
        rule(("get", "create", "list", "watch"), "", "persistentvolumeclaims"),
        rule(("update", "delete"), "", "persistentvolumeclaims"),
        rule("update", "", "pods/finalizers"), EVENTS]),
    ("ttl-controller", [rule(("update", "patch", "list", "watch"), "", "nodes"), EVENTS]),
    ("certificate-controller", [
        rule(("get", "list", "watch", "delete"), "certificates.k8s.io", "certificatesigningrequests"),
        rule("update", "certificates.k8s.io", ("certificatesigningrequests/status",
                                               "certificatesigningrequests/approval")),
        rule("approve", "certificates.k8s.io", "signers",
             ("kubernetes.io/kube-apiserver-client", "kubernetes.io/kube-apiserver-client-kubelet",
              "kubernetes.io/kubelet-serving", "kubernetes.io/legacy-unknown")),
        rule("sign", "certificates.k8s.io", "signers",
             ("kubernetes.io/kube-apiserver-client", "kubernetes.io/kube-apiserver-client-kubelet",
              "kubernetes.io/kubelet-serving", "kubernetes.io/legacy-unknown")),
        rule("create", "authorization.k8s.io", "subjectaccessreviews"), EVENTS]),
    ("pvc-protection-controller", [rule(("get", "list", "watch", "update"), "", "persistentvolumeclaims"),
                                   rule(("get", "list", "watch"), "", "pods"), EVENTS]),
    ("pv-protection-controller", [rule(("get", "list", "watch", "update"), "", "persistentvolumes"), EVENTS]),
    ("ttl-after-finished-controller", [rule(("get", "list", "watch", "delete"), "batch", "jobs"), EVENTS]),
    ("root-ca-cert-publisher", [rule(("create", "update"), "", "configmaps"), EVENTS]),
    ("validatingadmissionpolicy-status-controller", [
        rule(("get", "list", "watch"), "admissionregistration.k8s.io", "validatingadmissionpolicies"),
        rule(("get", "patch", "update"), "admissionregistration.k8s.io", "validatingadmissionpolicies/status"),
        EVENTS]),
    ("legacy-service-account-token-cleaner", [
        rule(("delete", "patch"), "", "secrets"), rule("get", "", "configmaps",
                                                          ("kube-apiserver-legacy-service-account-token-tracking",))]),
    ("resource-claim-controller", [
        rule(("get", "list", "watch"), "", "pods"), rule("update", "", "pods/finalizers"),
        rule(("get", "list", "watch", "create", "delete"), "resource.k8s.io", "resourceclaims"),
        rule(("update", "patch"), "resource.k8s.io", ("resourceclaims", "resourceclaims/status")),
        rule("get", "resource.k8s.io", "resourceclaimtemplates"),
        rule(("patch", "update"), "", "pods/status"), EVENTS,
        # DRAWorkloadResourceClaims (KEP-5729, 1.36): a PodGroup's claims, recorded in its status
        # as a pod's are in the pod's.
        rule(("get", "list", "watch"), "scheduling.k8s.io", "podgroups"),
        rule(("patch", "update"), "scheduling.k8s.io", "podgroups/status")]),
    # DRADeviceTaints (beta, on): evicts the pods whose devices are tainted NoExecute.
    ("device-taint-eviction-controller", [
        rule(("get", "list", "watch", "delete"), "", "pods"),
        rule(("update", "patch"), "", "pods/status"),
        *(rule(("get", "list", "watch"), "resource.k8s.io", r)
          for r in ("resourceclaims", "resourceslices", "deviceclasses", "devicetaintrules")), EVENTS,
        # The DeviceTaintRule's EvictionInProgress condition (its status since 1.35).
        rule(("update", "patch"), "resource.k8s.io", "devicetaintrules/status")]),
    ("service-cidrs-controller", [
        rule(("get", "list", "watch", "patch", "update"), "networking.k8s.io", "servicecidrs"),
        rule(("patch", "update"), "networking.k8s.io", ("servicecidrs/finalizers", "servicecidrs/status")),
        rule(("get", "list", "watch"), "networking.k8s.io", "ipaddresses"), EVENTS]),
]

# namespace → [(role name, rules)], and → [(binding name, role name, subjects)]
NAMESPACE_ROLES: dict[str, list[tuple[str, list[dict[str, Any]]]]] = {
    "kube-system": [
        ("extension-apiserver-authentication-reader",
         [rule(READ, "", "configmaps", ("extension-apiserver-authentication",))]),
        ("system::leader-locking-kube-controller-manager",
         [rule("watch", "", "configmaps"),
          rule(("get", "update"), "", "configmaps", ("kube-controller-manager",))]),
        ("system::leader-locking-kube-scheduler",
         [rule("watch", "", "configmaps"), rule(("get", "update"), "", "configmaps", ("kube-scheduler",))]),
        ("system:controller:bootstrap-signer", [rule(READ, "", "secrets")]),
        ("system:controller:cloud-provider", [rule(("create", "get", "list", "watch"), "", "configmaps")]),
        ("system:controller:token-cleaner", [rule(("delete", "get", "list", "watch"), "", "secrets"), EVENTS]),
    ],
    "kube-public": [
        ("system:controller:bootstrap-signer",
         [rule(READ, "", "configmaps"), rule("update", "", "configmaps", ("cluster-info",)), EVENTS]),
    ],
}

NAMESPACE_ROLE_BINDINGS: dict[str, list[tuple[str, str, list[tuple[str, str, str]]]]] = {
    "kube-system": [
        ("system::extension-apiserver-authentication-reader", "extension-apiserver-authentication-reader",
         [("User", "system:kube-controller-manager", ""), ("User", "system:kube-scheduler", "")]),
        ("system::leader-locking-kube-controller-manager", "system::leader-locking-kube-controller-manager",
         [("User", "system:kube-controller-manager", ""),
          ("ServiceAccount", "kube-controller-manager", "kube-system")]),
        ("system::leader-locking-kube-scheduler", "system::leader-locking-kube-scheduler",
         [("User", "system:kube-scheduler", ""), ("ServiceAccount", "kube-scheduler", "kube-system")]),
        ("system:controller:bootstrap-signer", "system:controller:bootstrap-signer",
         [("ServiceAccount", "bootstrap-signer", "kube-system")]),
        ("system:controller:cloud-provider", "system:controller:cloud-provider",
         [("ServiceAccount", "cloud-provider", "kube-system")]),
        ("system:controller:token-cleaner", "system:controller:token-cleaner",
         [("ServiceAccount", "token-cleaner", "kube-system")]),
    ],
    "kube-public": [
        ("system:controller:bootstrap-signer", "system:controller:bootstrap-signer",
         [("ServiceAccount", "bootstrap-signer", "kube-system")]),
    ],
}
