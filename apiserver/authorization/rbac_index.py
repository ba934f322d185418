"""The stored Roles, ClusterRoles, RoleBindings and ClusterRoleBindings, decoded once and indexed by subject.

A request must not scan the store to be authorized. ClusterRoles and ClusterRoleBindings are kept
whole; Roles and RoleBindings per namespace, read the first time a request in that namespace is
judged. Each part is re-read only when the watch hub says something under its storage prefix was
committed since it was read (`Store.last_change`, one dict lookup per part per request), and
then only the objects whose revision moved are decoded again. So a write is seen by the very next
request (read-your-writes, which kube's informer-fed authorizer only approaches), unrelated
writes cost nothing, and a RoleBinding written in one namespace re-reads that namespace alone.
Bindings are filed under the usernames and groups they name, so finding a user's bindings is a
few dict lookups. `rbac.py` and `escalation.py` read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from storage import Store

PREFIX = "/registry/rbac.authorization.k8s.io/"
_decoder = msgspec.json.Decoder(dict)
SubjectKey = tuple[str, str]
Filed = list[tuple[SubjectKey, "Binding"]]


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


def subject_key(subject: dict[str, Any], binding_namespace: str) -> SubjectKey | None:
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


def _file(obj: dict[str, Any], kind: str, namespace: str) -> Filed:
    ref = obj.get("roleRef") or {}
    out: Filed = []
    for subject in obj.get("subjects") or ():
        key = subject_key(subject, namespace)
        if key is not None:
            out.append((key, Binding(kind, obj["metadata"]["name"], namespace, ref.get("kind", ""),
                                     ref.get("name", ""), subject)))
    return out


class _Part:
    """One storage prefix's objects, decoded, refreshed when the prefix changed."""

    def __init__(self, prefix: str, binding_kind: str = "", namespace: str = "") -> None:
        self.prefix = prefix
        self.binding_kind = binding_kind  # "" for roles
        self.namespace = namespace
        self.seen = -1
        self.generation = 0
        self.by_key: dict[str, tuple[int, dict[str, Any], Filed]] = {}
        self.roles: dict[str, dict[str, Any]] = {}  # name → role, for role parts
        self.subjects: dict[SubjectKey, list[Binding]] = {}  # for binding parts

    def refresh(self, store: Store) -> bool:
        changed = store.last_change(self.prefix)
        if changed == self.seen:
            return False
        self.seen = changed
        self._reread(store)
        self.generation += 1
        return True

    def _reread(self, store: Store) -> None:
        current: dict[str, tuple[int, dict[str, Any], Filed]] = {}
        token = None
        while True:
            page = store.list(self.prefix, limit=5000, continue_token=token)
            for record in page.records:
                known = self.by_key.get(record.key)
                if known is not None and known[0] == record.revision:
                    current[record.key] = known
                    continue
                obj = _decoder.decode(record.value)
                filed: Filed = []
                if self.binding_kind:
                    namespace = (obj.get("metadata") or {}).get("namespace", "") if self.namespace else ""
                    filed = _file(obj, self.binding_kind, namespace)
                current[record.key] = (record.revision, obj, filed)
            token = page.continue_token
            if not token:
                break
        self.by_key = current
        if self.binding_kind:
            subjects: dict[SubjectKey, list[Binding]] = {}
            for _, _, filed in current.values():  # store order is key order: bindings by name
                for key, binding in filed:
                    subjects.setdefault(key, []).append(binding)
            self.subjects = subjects
        else:
            self.roles = {obj["metadata"]["name"]: obj for _, obj, _ in current.values()}


class RBACIndex:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._cluster_roles = _Part(f"{PREFIX}clusterroles/")
        self._cluster_bindings = _Part(f"{PREFIX}clusterrolebindings/", "ClusterRoleBinding")
        self._roles: dict[str, _Part] = {}
        self._bindings: dict[str, _Part] = {}
        self.rereads = 0  # how many parts were re-read, for the benchmark and tests

    def _namespace_parts(self, namespace: str) -> tuple[_Part, _Part]:
        roles = self._roles.get(namespace)
        if roles is None:
            roles = self._roles[namespace] = _Part(f"{PREFIX}roles/{namespace}/", namespace=namespace)
            self._bindings[namespace] = _Part(f"{PREFIX}rolebindings/{namespace}/", "RoleBinding", namespace)
        return roles, self._bindings[namespace]

    def refresh(self, namespace: str) -> tuple[int, ...]:
        """Bring the cluster parts and `namespace`'s up to date; returns their generations."""
        parts = [self._cluster_roles, self._cluster_bindings]
        if namespace:
            parts.extend(self._namespace_parts(namespace))
        for part in parts:
            if part.refresh(self.store):
                self.rereads += 1
        return tuple(part.generation for part in parts)

    def cluster_bindings(self, key: SubjectKey) -> list[Binding]:
        return self._cluster_bindings.subjects.get(key, [])

    def bindings(self, namespace: str, key: SubjectKey) -> list[Binding]:
        part = self._bindings.get(namespace)
        return part.subjects.get(key, []) if part is not None else []

    def cluster_role(self, name: str) -> dict[str, Any] | None:
        return self._cluster_roles.roles.get(name)

    def role(self, namespace: str, name: str) -> dict[str, Any] | None:
        part = self._roles.get(namespace)
        return part.roles.get(name) if part is not None else None

    def role_rules(self, binding: Binding) -> tuple[list[dict[str, Any]] | None, str]:
        """The rules of the role a binding refers to, or (None, the resolver's not-found error)."""
        if binding.role_kind == "ClusterRole":
            role = self.cluster_role(binding.role_name)
            if role is None:
                return None, f'clusterrole.rbac.authorization.k8s.io "{binding.role_name}" not found'
        else:
            role = self.role(binding.namespace, binding.role_name)
            if role is None:
                return None, f'role.rbac.authorization.k8s.io "{binding.role_name}" not found'
        return role.get("rules") or [], ""
