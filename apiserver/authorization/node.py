"""kube's Node authorizer (`--authorization-mode=Node`): what a kubelet's credentials may touch.

A request from `system:node:<name>` in group `system:nodes` is judged here; anyone else gets no
opinion. Secrets, configmaps, PVCs, PVs, ResourceClaims, VolumeAttachments and service-account
tokens are allowed only along the graph of pods bound to the node (`node_graph`); its Lease, its
CSINode, its ResourceSlices, its Node and its pods by name or field selector (upstream's
AuthorizeNodeWithSelectors, GA); everything else by the static `system:node` rules, which are
the Node authorizer's own (upstream leaves the system:node ClusterRoleBinding without subjects).
What the authorizer cannot see (the body of a create, whose pod a status patch is for) is left
to the NodeRestriction admission plugin. Reasons are upstream's strings. Built by `chain.py`.
"""

from __future__ import annotations

from typing import Any

from admission.plugins.node_restriction import NODE_LEASE_NAMESPACE, NODE_USER_PREFIX, NODES_GROUP
from apiserver.authorization import bootstrap_roles, node_graph, rules
from apiserver.authorization.attributes import Attributes
from storage import Store

# (group, resource) → the graph's vertex type, for the objects reached only through pods
_GRAPH = {("", "secrets"): "secret", ("", "configmaps"): "configmap", ("", "persistentvolumeclaims"): "pvc",
          ("", "persistentvolumes"): "pv", ("resource.k8s.io", "resourceclaims"): "resourceclaim",
          ("storage.k8s.io", "volumeattachments"): "volumeattachment"}

Answer = tuple[bool, str]  # (allowed, reason when not)


def node_identity(user: Any) -> tuple[str, bool]:
    """kube's NodeIdentity: (node name, is a node) — the system:node: prefix and the system:nodes group."""
    if user is None or not user.name.startswith(NODE_USER_PREFIX) or NODES_GROUP not in user.groups:
        return "", False
    return user.name[len(NODE_USER_PREFIX):], True


def _static_rules() -> list[dict[str, Any]]:
    for name, found, _labels, _aggregate in bootstrap_roles.CLUSTER_ROLES:
        if name == "system:node":
            return found
    raise LookupError("bootstrap policy has no system:node ClusterRole")


def _selects(field_selector: str, field: str, value: str) -> bool:
    """Does the selector hold the term `field=value` (or `==`)?"""
    for term in field_selector.split(","):
        key, sep, wanted = term.partition("==") if "==" in term else term.partition("=")
        if sep and not key.endswith("!") and key.strip() == field and wanted.strip() == value:
            return True
    return False


class NodeAuthorizer:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.node_rules = _static_rules()

    def authorize(self, attrs: Attributes) -> Answer:
        node, is_node = node_identity(attrs.user)
        if not is_node:
            return False, ""
        if not node:
            return False, f'unknown node for user "{attrs.user.name}"'
        if attrs.is_resource:
            decided = self._subdivided(node, attrs)
            if decided is not None:
                return decided
        # Access to other resources is not subdivided: the static node rules decide.
        return any(rules.allows(rule, attrs) for rule in self.node_rules), ""

    def _subdivided(self, node: str, attrs: Attributes) -> Answer | None:
        what = (attrs.api_group, attrs.resource)
        if what in (("", "secrets"), ("", "configmaps")):
            return self._read_namespaced(node, _GRAPH[what], attrs)
        if what == ("", "persistentvolumeclaims"):
            if attrs.subresource == "status":
                return self._status_update(node, "pvc", attrs)
            return self._get(node, "pvc", attrs)
        if what in _GRAPH:
            return self._get(node, _GRAPH[what], attrs)
        if what == ("", "serviceaccounts"):
            return self._create_token(node, attrs)
        if what == ("coordination.k8s.io", "leases"):
            return self._lease(node, attrs)
        if what == ("storage.k8s.io", "csinodes"):
            return self._csinode(node, attrs)
        if what == ("resource.k8s.io", "resourceslices"):
            return self._resource_slice(node, attrs)
        if what == ("", "nodes"):
            return self._node(node, attrs)
        if what == ("", "pods"):
            return self._pod(node, attrs)
        return None

    def _related(self, node: str, kind: str, attrs: Attributes) -> Answer:
        if not attrs.name:
            return False, "No Object name found"
        if node_graph.reaches(self.store, node, kind, attrs.namespace, attrs.name):
            return True, ""
        return False, f"no relationship found between node '{node}' and this object"

    def _get(self, node: str, kind: str, attrs: Attributes) -> Answer:
        if attrs.verb != "get":
            return False, "can only get individual resources of this type"
        if attrs.subresource:
            return False, "cannot get subresource"
        return self._related(node, kind, attrs)

    def _read_namespaced(self, node: str, kind: str, attrs: Attributes) -> Answer:
        if attrs.verb not in ("get", "list", "watch"):
            return False, "can only read resources of this type"
        if attrs.subresource:
            return False, "cannot read subresource"
        if not attrs.namespace:
            return False, "can only read namespaced object of this type"
        return self._related(node, kind, attrs)

    def _status_update(self, node: str, kind: str, attrs: Attributes) -> Answer:
        if attrs.verb not in ("update", "patch"):
            return False, "can only get/update/patch this type"
        if attrs.subresource != "status":
            return False, "can only update status subresource"
        return self._related(node, kind, attrs)

    def _create_token(self, node: str, attrs: Attributes) -> Answer:
        if attrs.verb != "create" or not attrs.name:
            return False, "can only create tokens for individual service accounts"
        if attrs.subresource != "token":
            return False, "can only create token subresource of serviceaccount"
        return self._related(node, "serviceaccount", attrs)

    def _lease(self, node: str, attrs: Attributes) -> Answer:
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return False, "can only get, create, update, patch, or delete a node lease"
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            return False, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace'
        # A create names no object here; NodeRestriction checks the body's name.
        if attrs.verb != "create" and attrs.name != node:
            return False, "can only access node lease with the same name as the requesting node"
        return True, ""

    def _csinode(self, node: str, attrs: Attributes) -> Answer:
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return False, "can only get, create, update, patch, or delete a CSINode"
        if attrs.subresource:
            return False, "cannot authorize CSINode subresources"
        if attrs.verb != "create" and attrs.name != node:
            return False, "can only access CSINode with the same name as the requesting node"
        return True, ""

    def _resource_slice(self, node: str, attrs: Attributes) -> Answer:
        if attrs.subresource:
            return False, "cannot authorize ResourceSlice subresources"
        if attrs.verb == "create":
            return True, ""  # NodeRestriction checks the body's spec.nodeName
        if attrs.verb in ("get", "update", "patch", "delete"):
            return self._related(node, "resourceslice", attrs)
        if attrs.verb in ("list", "watch", "deletecollection"):
            if _selects(attrs.field_selector, "spec.nodeName", node):
                return True, ""
            return False, "can only list/watch/deletecollection resourceslices with nodeName field selector"
        return False, ("only the following verbs are allowed for a ResourceSlice: get, watch, list, create, "
                       "update, patch, delete, deletecollection")

    def _node(self, node: str, attrs: Attributes) -> Answer:
        if not attrs.subresource:
            if attrs.verb in ("create", "update", "patch"):
                return True, ""  # NodeRestriction limits the node to its own object
            if attrs.verb in ("get", "list", "watch"):
                # By name, not by graph: a kubelet reads its Node before it has created it.
                if attrs.name == node:
                    return True, ""
                if not attrs.name:
                    return False, f"node '{node}' cannot read all nodes, only its own Node object"
                return False, f"node '{node}' cannot read '{attrs.name}', only its own Node object"
        elif attrs.subresource == "status" and attrs.verb in ("update", "patch"):
            return True, ""
        return False, ""

    def _pod(self, node: str, attrs: Attributes) -> Answer:
        if not attrs.subresource:
            if attrs.verb == "get":
                return self._get(node, "pod", attrs)
            if attrs.verb in ("list", "watch"):
                if _selects(attrs.field_selector, "spec.nodeName", node):
                    return True, ""
                if attrs.name:  # one pod, by metadata.name: if it is bound here
                    return self._related(node, "pod", attrs)
                return False, "can only list/watch pods with spec.nodeName field selector"
            if attrs.verb in ("create", "delete"):
                return True, ""  # mirror pods: NodeRestriction checks them
        elif attrs.subresource == "status" and attrs.verb in ("update", "patch"):
            return True, ""  # NodeRestriction checks the pod is bound to this node
        elif attrs.subresource == "eviction" and attrs.verb == "create":
            return True, ""
        return False, ""
