"""The stored Roles, ClusterRoles, RoleBindings and ClusterRoleBindings, decoded once and indexed by subject.

A request must not scan the store to be authorized. This index is rebuilt for one of the four
resources only when the watch hub says something under its prefix was committed since the last
build (`Store.last_change`, one dict lookup per resource per request), so a write is seen by the
very next request (read-your-writes, which kube's informer-fed authorizer only approaches), and
unrelated writes cost nothing. Bindings are filed under the usernames and groups they name, so
finding a user's bindings is a few dict lookups. `rbac.py` is the one reader.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from storage import Store

PREFIX = "/registry/rbac.authorization.k8s.io/"
_RESOURCES = ("roles", "clusterroles", "rolebindings", "clusterrolebindings")


@dataclass(frozen=True)
class Binding:
    kind: str  # RoleBinding | ClusterRoleBinding
    name: str
    namespace: str  # "" for a ClusterRoleBinding
    role_kind: str  # Role | ClusterRole
    role_name: str
    subject: dict[str, Any]  # the subject that put this binding under its index key

    def describe(self) -> str:
        """kube's clusterRoleBindingDescriber / roleBindingDescriber, for "RBAC: allowed by ..."."""
        subject = _describe_subject(self.subject, self.namespace)
        if self.kind == "ClusterRoleBinding":
            return f'ClusterRoleBinding "{self.name}" of {self.role_kind} "{self.role_name}" to {subject}'
        return f'RoleBinding "{self.name}/{self.namespace}" of {self.role_kind} "{self.role_name}" to {subject}'


def _describe_subject(subject: dict[str, Any], binding_namespace: str) -> str:
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


def subject_key(subject: dict[str, Any], binding_namespace: str) -> tuple[str, str] | None:
    """Where a subject is filed: ("user", username) for users and service accounts, ("group", name)."""
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User":
        return ("user", name)
    if kind == "Group":
        return ("group", name)
    if kind == "ServiceAccount":
        # A RoleBinding's service account defaults to the binding's namespace (kube's appliesToUser).
        namespace = subject.get("namespace") or binding_namespace
        return ("user", f"system:serviceaccount:{namespace}:{name}") if namespace and name else None
    return None


class RBACIndex:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._seen: dict[str, int] = {}  # resource → last_change revision it was built at
        self.cluster_roles: dict[str, dict[str, Any]] = {}
        self.roles: dict[tuple[str, str], dict[str, Any]] = {}
        self.cluster_bindings: dict[tuple[str, str], list[Binding]] = {}
        # namespace → subject key → bindings
        self.bindings: dict[str, dict[tuple[str, str], list[Binding]]] = {}
        self.generation = 0  # bumped on every rebuild; the resolver's cache is keyed by it
        self.rebuilds = 0

    def refresh(self) -> None:
        """Rebuild whichever of the four resources changed since it was last read."""
        for resource in _RESOURCES:
            prefix = f"{PREFIX}{resource}/"
            changed = self.store.last_change(prefix)
            if self._seen.get(resource) != changed:
                self._rebuild(resource, prefix)
                self._seen[resource] = changed

    def _objects(self, prefix: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        token = None
        while True:
            page = self.store.list(prefix, limit=5000, continue_token=token)
            out.extend(json.loads(record.value) for record in page.records)
            token = page.continue_token
            if not token:
                return out

    def _rebuild(self, resource: str, prefix: str) -> None:
        objects = self._objects(prefix)
        self.generation += 1
        self.rebuilds += 1
        if resource == "clusterroles":
            self.cluster_roles = {o["metadata"]["name"]: o for o in objects}
        elif resource == "roles":
            self.roles = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in objects}
        elif resource == "clusterrolebindings":
            index: dict[tuple[str, str], list[Binding]] = {}
            for obj in sorted(objects, key=lambda o: o["metadata"]["name"]):
                for key, binding in _file(obj, "ClusterRoleBinding", ""):
                    index.setdefault(key, []).append(binding)
            self.cluster_bindings = index
        else:
            by_namespace: dict[str, dict[tuple[str, str], list[Binding]]] = {}
            for obj in sorted(objects, key=lambda o: o["metadata"]["name"]):
                namespace = obj["metadata"].get("namespace", "")
                for key, binding in _file(obj, "RoleBinding", namespace):
                    by_namespace.setdefault(namespace, {}).setdefault(key, []).append(binding)
            self.bindings = by_namespace

    def role_rules(self, binding: Binding) -> tuple[list[dict[str, Any]] | None, str]:
        """The rules of the role a binding refers to, or (None, the resolver's not-found error)."""
        if binding.role_kind == "ClusterRole":
            role = self.cluster_roles.get(binding.role_name)
            if role is None:
                return None, f'clusterrole.rbac.authorization.k8s.io "{binding.role_name}" not found'
        else:
            role = self.roles.get((binding.namespace, binding.role_name))
            if role is None:
                return None, f'role.rbac.authorization.k8s.io "{binding.role_name}" not found'
        return role.get("rules") or [], ""


def _file(obj: dict[str, Any], kind: str, namespace: str) -> list[tuple[tuple[str, str], Binding]]:
    ref = obj.get("roleRef") or {}
    out = []
    for subject in obj.get("subjects") or ():
        key = subject_key(subject, namespace)
        if key is not None:
            out.append((key, Binding(kind, obj["metadata"]["name"], namespace, ref.get("kind", ""),
                                     ref.get("name", ""), subject)))
    return out
