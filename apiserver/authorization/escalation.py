"""No one grants what they do not hold: the `escalate` and `bind` checks on RBAC writes.

kube's rbac policybased storage: writing a Role or ClusterRole needs every rule in it to be
covered by the writer's own rules (in the object's namespace, cluster-wide ones included) unless
the writer may `escalate` that role; an aggregationRule needs full authority. Writing a binding
needs `bind` on the referenced role, or else holding all of that role's rules. system:masters
skips every check (EscalationAllowed), and an update that changes only ownerReferences or
finalizers is not checked (IsOnlyMutatingGCFields). The refusal is kube's 403: `user "x"
(groups=["a" "b"]) is attempting to grant RBAC permissions not currently held:` with one
compacted rule per line. `writing.prepare_create` / `prepare_update` call `check` before admission.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors
from apiserver.authorization import rules as rule_match
from apiserver.authorization.attributes import Attributes
from apiserver.authorization.chain import AUTHORIZER, PRIVILEGED_GROUP, Authorizer

GROUP = "rbac.authorization.k8s.io"
_ROLES = ("roles", "clusterroles")
_BINDINGS = ("rolebindings", "clusterrolebindings")
_FULL_AUTHORITY = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, {"verbs": ["*"], "nonResourceURLs": ["*"]}]
_GC_FIELDS = ("ownerReferences", "finalizers", "resourceVersion", "managedFields")


def _only_gc_fields(new: dict[str, Any], old: dict[str, Any]) -> bool:
    def strip(obj: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _GC_FIELDS}
        return {**obj, "metadata": meta}
    return strip(new) == strip(old)


def confirm_no_escalation(authorizer: Authorizer, user: Any, namespace: str, wanted: list[dict[str, Any]]) -> str:
    """"" when `user` holds every rule in `wanted`; else kube's explanation of what is missing."""
    owned, resolution_error = authorizer.policy_rules(user, namespace)
    missing = rule_match.covers(owned, wanted)
    if not missing:
        return ""
    lines = sorted({rule_match.compact_string(r) for r in rule_match.compact(missing)})
    message = (f'user "{user.name}" (groups={rule_match.go_strings(user.groups)}) is attempting to grant RBAC permissions '
               "not currently held:\n" + "\n".join(lines))
    if resolution_error:
        message += f"; resolution errors: [{resolution_error}]"
    return message


def check(ep: Any, obj: dict[str, Any], old: dict[str, Any] | None, user: Any) -> None:
    """Raise kube's 403 when writing `obj` (over `old`, on update) would grant more than `user` holds."""
    resource = ep.resource.resource
    if ep.resource.group != GROUP or resource not in _ROLES + _BINDINGS or user is None:
        return
    authorizer: Authorizer | None = ep.server.extra.get(AUTHORIZER)
    if authorizer is None or PRIVILEGED_GROUP in user.groups:
        return
    if old is not None and _only_gc_fields(obj, old):
        return
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or ""
    namespace = ep.namespace
    if resource in _ROLES:
        escalate = Attributes(user, "escalate", True, namespace=namespace, api_group=GROUP, api_version="v1",
                              resource=resource, name=name)
        if authorizer.authorize(escalate).allowed:
            return
        why = confirm_no_escalation(authorizer, user, namespace, obj.get("rules") or [])
        if why:
            raise errors.forbidden(resource, GROUP, name, why)
        aggregation = obj.get("aggregationRule")
        changed = old is None or aggregation != old.get("aggregationRule")
        if aggregation and changed and confirm_no_escalation(authorizer, user, namespace, _FULL_AUTHORITY):
            raise errors.forbidden(resource, GROUP, name, "must have cluster-admin privileges to use the aggregationRule")
        return
    ref = obj.get("roleRef") or {}
    ref_resource = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
    bind = Attributes(user, "bind", True, namespace=namespace, api_group=ref.get("apiGroup", GROUP), api_version="",
                      resource=ref_resource, name=ref.get("name", ""))
    if authorizer.authorize(bind).allowed:
        return
    role_rules, error = _referenced_rules(authorizer, ref, namespace)
    if role_rules is None:
        raise errors.forbidden(resource, GROUP, name, error)
    why = confirm_no_escalation(authorizer, user, namespace, role_rules)
    if why:
        raise errors.forbidden(resource, GROUP, name, why)


def _referenced_rules(authorizer: Authorizer, ref: dict[str, Any], namespace: str) -> tuple[list[Any] | None, str]:
    """GetRoleReferenceRules: the rules of the role a binding names, read from the RBAC index."""
    if authorizer.rbac is None:
        return [], ""
    index = authorizer.rbac.index
    index.refresh(namespace)
    if ref.get("kind") == "ClusterRole":
        role = index.cluster_role(ref.get("name", ""))
        if role is None:
            return None, f'clusterrole.rbac.authorization.k8s.io "{ref.get("name", "")}" not found'
    else:
        role = index.role(namespace, ref.get("name", ""))
        if role is None:
            return None, f'role.rbac.authorization.k8s.io "{ref.get("name", "")}" not found'
    return role.get("rules") or [], ""
