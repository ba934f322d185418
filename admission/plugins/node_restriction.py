"""The NodeRestriction plugin: a kubelet may change only what belongs to its own node.

Upstream: plugin/pkg/admission/noderestriction/admission.go, which kubeadm enables. It judges
requests from `system:node:<name>` in `system:nodes` alone, on the bodies the Node authorizer
(apiserver/authorization/node.py) cannot see: its own Node only (no taint changes, no labels
under node-restriction.kubernetes.io/ or unknown kubernetes.io / k8s.io ones); mirror pods bound
to itself that reference nothing, deletes and status writes of its own pods (not their labels or
claim statuses); its own Lease in kube-node-lease, its own CSINode, ResourceSlices with its
nodeName, service-account tokens bound to a pod that runs on it. Messages are upstream's. Always in the chain, in both halves (`assembly.py`); everyone
else passes.
"""

from __future__ import annotations

from typing import Any

from admission import errors, pod_references
from admission.attributes import CREATE, DELETE, UPDATE, Attributes
from admission.view import ClusterView

NODES_GROUP = "system:nodes"
NODE_USER_PREFIX = "system:node:"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
NODE_LEASE_NAMESPACE = "kube-node-lease"
RESTRICTED_NAMESPACE = "node-restriction.kubernetes.io"
# kubeletapis.IsKubeletLabel: the labels a kubelet may set on its Node, and whole namespaces.
KUBELET_LABELS = frozenset({
    "kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region"})
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


def _namespace(label: str) -> str:
    return label.split("/", 1)[0] if "/" in label else ""


def _within(namespace: str, domain: str) -> bool:
    return namespace == domain or namespace.endswith("." + domain)


def forbidden_labels(labels: set[str]) -> list[str]:
    """getForbiddenLabels: node-restriction ones, and kubernetes.io / k8s.io ones not the kubelet's."""
    found = []
    for label in sorted(labels):
        namespace = _namespace(label)
        if _within(namespace, RESTRICTED_NAMESPACE):
            found.append(label)
        elif ((_within(namespace, "kubernetes.io") or _within(namespace, "k8s.io")) and label not in KUBELET_LABELS
              and not any(_within(namespace, n) for n in KUBELET_LABEL_NAMESPACES)):
            found.append(label)
    return found


def _modified_labels(new: dict[str, str], old: dict[str, str]) -> set[str]:
    return {k for k in set(new) | set(old) if new.get(k) != old.get(k)}


def _meta(obj: dict[str, Any] | None) -> dict[str, Any]:
    return (obj or {}).get("metadata") or {}


def _spec(obj: dict[str, Any] | None) -> dict[str, Any]:
    return (obj or {}).get("spec") or {}


class NodeRestrictionPlugin:
    name = "NodeRestriction"

    def __init__(self, view: ClusterView):
        self.view = view

    def admit(self, attrs: Attributes) -> None:
        """Creates and updates, on the body as sent (before the strategy), as upstream's Admit."""
        if attrs.operation != DELETE:
            self._judge(attrs)

    def validate(self, attrs: Attributes) -> None:
        """Deletes: haru runs only the validating half for them."""
        if attrs.operation == DELETE:
            self._judge(attrs)

    def _judge(self, attrs: Attributes) -> None:
        user = attrs.user
        if not user.username.startswith(NODE_USER_PREFIX) or NODES_GROUP not in user.groups:
            return
        node = user.username[len(NODE_USER_PREFIX):]
        if not node:
            raise errors.forbidden(attrs, f'could not determine node from user "{user.username}"')
        check = _CHECKS.get((attrs.group, attrs.resource))
        if check is not None:
            check(self, node, attrs)

    # -- pods ----------------------------------------------------------------------------------
    def _pod(self, node: str, attrs: Attributes) -> None:
        if attrs.subresource == "":
            if attrs.operation == CREATE:
                self._mirror_pod(node, attrs)
            elif attrs.operation == DELETE:
                if _spec(attrs.old_object).get("nodeName") != node:
                    raise errors.forbidden(attrs, f'node "{node}" can only delete pods with spec.nodeName set to itself')
            else:
                raise errors.forbidden(attrs, f'unexpected operation "{attrs.operation}", node "{node}" can only '
                                              "create and delete mirror pods")
        elif attrs.subresource == "status":
            self._pod_status(node, attrs)
        elif attrs.subresource == "eviction":
            pod = self.view.get("", "pods", attrs.namespace, attrs.name)
            if pod is not None and _spec(pod).get("nodeName") != node:
                raise errors.forbidden(attrs, f'node "{node}" can only evict pods with spec.nodeName set to itself')
        else:
            raise errors.forbidden(attrs, f'unexpected subresource "{attrs.subresource}"')

    def _mirror_pod(self, node: str, attrs: Attributes) -> None:
        pod = attrs.object or {}
        meta, spec = _meta(pod), _spec(pod)
        if MIRROR_ANNOTATION not in (meta.get("annotations") or {}):
            raise errors.forbidden(attrs, f'pod does not have "{MIRROR_ANNOTATION}" annotation, node "{node}" can '
                                          "only create mirror pods")
        if spec.get("nodeName") != node:
            raise errors.forbidden(attrs, f'node "{node}" can only create pods with spec.nodeName set to itself')
        owners = meta.get("ownerReferences") or []
        if len(owners) > 1:
            raise errors.forbidden(attrs, f'node "{node}" can only create pods with a single owner reference set '
                                          "to itself")
        if not owners:
            raise errors.forbidden(attrs, f'node "{node}" can only create pods with an owner reference set to itself')
        owner = owners[0]
        stored = self.view.get("", "nodes", "", node)
        if (owner.get("apiVersion") != "v1" or owner.get("kind") != "Node" or owner.get("name") != node
                or stored is None or owner.get("uid") != _meta(stored).get("uid")):
            raise errors.forbidden(attrs, f'node "{node}" can only create pods with an owner reference set to itself')
        # A mirror pod may reference no other API object: the node would gain access to it.
        if spec.get("serviceAccountName"):
            raise errors.forbidden(attrs, f'node "{node}" can not create pods that reference a service account')
        if pod_references.secret_names(pod):
            raise errors.forbidden(attrs, f'node "{node}" can not create pods that reference secrets')
        if pod_references.configmap_names(pod):
            raise errors.forbidden(attrs, f'node "{node}" can not create pods that reference configmaps')
        if any("persistentVolumeClaim" in v for v in spec.get("volumes") or ()):
            raise errors.forbidden(attrs, f'node "{node}" can not create pods that reference persistentvolumeclaims')
        if spec.get("resourceClaims"):
            raise errors.forbidden(attrs, f'node "{node}" can not create pods that reference resourceclaims')

    def _pod_status(self, node: str, attrs: Attributes) -> None:
        if attrs.operation != UPDATE:
            raise errors.forbidden(attrs, f'unexpected operation "{attrs.operation}"')
        old, new = attrs.old_object or {}, attrs.object or {}
        if _spec(old).get("nodeName") != node:
            raise errors.forbidden(attrs, f'node "{node}" can only update pod status for pods with spec.nodeName '
                                          "set to itself")
        if (_meta(old).get("labels") or {}) != (_meta(new).get("labels") or {}):
            raise errors.forbidden(attrs, f'node "{node}" cannot update labels through pod status')
        old_status, new_status = old.get("status") or {}, new.get("status") or {}
        if (old_status.get("resourceClaimStatuses") or []) != (new_status.get("resourceClaimStatuses") or []):
            raise errors.forbidden(attrs, f'node "{node}" cannot update resource claim statues')
        if old_status.get("extendedResourceClaimStatus") != new_status.get("extendedResourceClaimStatus"):
            raise errors.forbidden(attrs, f'node "{node}" cannot update extended resource claim status')

    # -- the node's own objects ----------------------------------------------------------------
    def _node(self, node: str, attrs: Attributes) -> None:
        requested = attrs.name or _meta(attrs.object).get("name", "")
        if requested != node:
            raise errors.forbidden(attrs, f'node "{node}" is not allowed to modify node "{requested}"')
        new = attrs.object or {}
        if attrs.operation == CREATE:
            if _spec(new).get("configSource") is not None:
                raise errors.forbidden(attrs, f'node "{node}" is not allowed to create pods with a non-nil '
                                              "configSource")
            bad = forbidden_labels(set(_meta(new).get("labels") or {}))
            if bad:
                raise errors.forbidden(attrs, f'node "{node}" is not allowed to set the following labels: '
                                              + ", ".join(bad))
        elif attrs.operation == UPDATE:
            old = attrs.old_object or {}
            source = _spec(new).get("configSource")
            if source is not None and source != _spec(old).get("configSource"):
                raise errors.forbidden(attrs, f'node "{node}" is not allowed to update configSource to a new '
                                              "non-nil configSource")
            if (_spec(new).get("taints") or []) != (_spec(old).get("taints") or []):
                raise errors.forbidden(attrs, f'node "{node}" is not allowed to modify taints')
            bad = forbidden_labels(_modified_labels(_meta(new).get("labels") or {}, _meta(old).get("labels") or {}))
            if bad:
                raise errors.forbidden(attrs, "is not allowed to modify labels: " + ", ".join(bad))

    def _named_like_node(self, node: str, attrs: Attributes, what: str) -> None:
        name = _meta(attrs.object).get("name", "") if attrs.operation == CREATE else attrs.name
        if name != node:
            raise errors.forbidden(attrs, f"can only access {what} with the same name as the requesting node")

    def _lease(self, node: str, attrs: Attributes) -> None:
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            raise errors.forbidden(attrs, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace')
        self._named_like_node(node, attrs, "node lease")

    def _csinode(self, node: str, attrs: Attributes) -> None:
        self._named_like_node(node, attrs, "CSINode")

    def _service_account(self, node: str, attrs: Attributes) -> None:
        """A kubelet's TokenRequest must be bound to a pod that runs on it."""
        if attrs.operation != CREATE or attrs.subresource != "token":
            return
        ref = _spec(attrs.object).get("boundObjectRef") or {}
        if ref.get("apiVersion") != "v1" or ref.get("kind") != "Pod" or not ref.get("name"):
            raise errors.forbidden(attrs, "node requested token not bound to a pod")
        if not ref.get("uid"):
            raise errors.forbidden(attrs, "node requested token with a pod binding without a uid")
        pod = self.view.get("", "pods", attrs.namespace, ref["name"])
        if pod is None:
            raise errors.Rejection(404, "NotFound", f'pods "{ref["name"]}" not found',
                                   {"name": ref["name"], "kind": "pods"})
        if ref["uid"] != _meta(pod).get("uid"):
            raise errors.forbidden(attrs, f"the UID in the bound object reference ({ref['uid']}) does not match the "
                                          "UID in record. The object might have been deleted and then recreated")
        if _spec(pod).get("nodeName") != node:
            raise errors.forbidden(attrs, "node requested token bound to a pod scheduled on a different node")

    def _resource_slice(self, node: str, attrs: Attributes) -> None:
        # The authorizer saw neither a create's body nor which slices a deletecollection removes.
        if attrs.operation == CREATE and _spec(attrs.object).get("nodeName") != node:
            raise errors.forbidden(attrs, "can only create ResourceSlice with the same NodeName as the requesting node")
        if attrs.operation == DELETE and _spec(attrs.old_object).get("nodeName") != node:
            raise errors.forbidden(attrs, "can only delete ResourceSlice with the same NodeName as the requesting node")


_CHECKS = {("", "pods"): NodeRestrictionPlugin._pod, ("", "nodes"): NodeRestrictionPlugin._node,
           ("coordination.k8s.io", "leases"): NodeRestrictionPlugin._lease,
           ("storage.k8s.io", "csinodes"): NodeRestrictionPlugin._csinode,
           ("", "serviceaccounts"): NodeRestrictionPlugin._service_account,
           ("resource.k8s.io", "resourceslices"): NodeRestrictionPlugin._resource_slice}
