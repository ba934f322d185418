"""`Resource`: one group/version/resource as the wire names it, and the paths under it.

Built by `discovery.Discovery` from the server's resource lists, or written down directly for the
few well-known ones below. `rest.RestClient` turns (resource, namespace, name, subresource) into a
URL path with `Resource.path`; informers and controllers use a `Resource` as a dictionary key.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    resource: str  # the plural, as in the URL
    kind: str = ""
    namespaced: bool = True
    verbs: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """`pods`, `deployments.apps`: how kube names a resource in messages."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def supports(self, *verbs: str) -> bool:
        return all(v in self.verbs for v in verbs)

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        parts = [root]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{namespace}")
        parts.append(self.resource)
        if name:
            parts.append(name)
            if subresource:
                parts.append(subresource)
        return "/".join(parts)

    def __str__(self) -> str:
        return f"{self.api_version}/{self.resource}"


_ALL = frozenset({"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"})
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", namespaced=False,
                      verbs=frozenset({"create", "delete", "get", "list", "patch", "update", "watch"}))
PODS = Resource("", "v1", "pods", "Pod", verbs=_ALL)
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", verbs=_ALL)
SECRETS = Resource("", "v1", "secrets", "Secret", verbs=_ALL)
SERVICEACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount", verbs=_ALL)
REPLICASETS = Resource("apps", "v1", "replicasets", "ReplicaSet", verbs=_ALL)
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", verbs=_ALL)
STATEFULSETS = Resource("apps", "v1", "statefulsets", "StatefulSet", verbs=_ALL)
DAEMONSETS = Resource("apps", "v1", "daemonsets", "DaemonSet", verbs=_ALL)
CONTROLLERREVISIONS = Resource("apps", "v1", "controllerrevisions", "ControllerRevision", verbs=_ALL)
SERVICES = Resource("", "v1", "services", "Service", verbs=frozenset(_ALL - {"deletecollection"}))
ENDPOINTS = Resource("", "v1", "endpoints", "Endpoints", verbs=_ALL)
ENDPOINTSLICES = Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", verbs=_ALL)
REPLICATIONCONTROLLERS = Resource("", "v1", "replicationcontrollers", "ReplicationController", verbs=_ALL)
JOBS = Resource("batch", "v1", "jobs", "Job", verbs=_ALL)
CRONJOBS = Resource("batch", "v1", "cronjobs", "CronJob", verbs=_ALL)
NODES = Resource("", "v1", "nodes", "Node", namespaced=False, verbs=_ALL)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", verbs=_ALL)
CLUSTERROLES = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False, verbs=_ALL)
EVENTS = Resource("", "v1", "events", "Event", verbs=_ALL)
RESOURCECLAIMS = Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", verbs=_ALL)
RESOURCECLAIMTEMPLATES = Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", verbs=_ALL)
RESOURCESLICES = Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", namespaced=False, verbs=_ALL)
DEVICECLASSES = Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", namespaced=False, verbs=_ALL)
DEVICETAINTRULES = Resource("resource.k8s.io", "v1beta2", "devicetaintrules", "DeviceTaintRule", namespaced=False,
                            verbs=_ALL)
PERSISTENTVOLUMECLAIMS = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", verbs=_ALL)
PERSISTENTVOLUMES = Resource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False, verbs=_ALL)
STORAGECLASSES = Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False, verbs=_ALL)
PODDISRUPTIONBUDGETS = Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", verbs=_ALL)
PRIORITYCLASSES = Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False, verbs=_ALL)
PODGROUPS = Resource("scheduling.k8s.io", "v1alpha2", "podgroups", "PodGroup", verbs=_ALL)
WORKLOADS = Resource("scheduling.k8s.io", "v1alpha2", "workloads", "Workload", verbs=_ALL)
EVENTS_V1 = Resource("events.k8s.io", "v1", "events", "Event", verbs=_ALL)
