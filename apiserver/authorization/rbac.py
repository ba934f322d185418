"""kube's RBAC authorizer: a user's rules are those of every binding naming them, and any rule may allow.

`rules_for(user, namespace)` is the rule resolver (ClusterRoleBindings, then the namespace's
RoleBindings, each resolved to its role's rules, with a not-found error for a missing role);
`authorize(attrs)` walks those rules and answers (allowed, reason) as rbac.go does: "RBAC:
allowed by ClusterRoleBinding ..." on a match, otherwise no opinion with the resolution errors
as the reason. Resolved rule lists are cached per (user, groups, namespace) until the index
changes. Used by `chain.py`, `escalation.py` and the review endpoints.
"""

from __future__ import annotations

from typing import Any

from apiserver.authorization import rbac_index, rules
from apiserver.authorization.attributes import Attributes
from storage import Store

_CACHE_LIMIT = 10_000

Resolved = tuple[list[tuple[dict[str, Any], rbac_index.Binding]], list[str]]  # (rule, from binding), errors


class RBACAuthorizer:
    def __init__(self, store: Store) -> None:
        self.index = rbac_index.RBACIndex(store)
        # (user, groups, namespace) → (the index generations it was resolved at, the resolution)
        self._cache: dict[tuple[str, tuple[str, ...], str], tuple[tuple[int, ...], Resolved]] = {}

    def _resolve(self, user: Any, namespace: str) -> Resolved:
        index = self.index
        generations = index.refresh(namespace)
        key = (user.name, tuple(user.groups), namespace)
        found = self._cache.get(key)
        if found is not None and found[0] == generations:
            return found[1]
        subject_keys = [("user", user.name)] + [("group", g) for g in user.groups]
        pairs: list[tuple[dict[str, Any], rbac_index.Binding]] = []
        failures: list[str] = []
        seen: set[tuple[str, str, str]] = set()
        candidates = [b for k in subject_keys for b in index.cluster_bindings(k)]
        if namespace:
            candidates += [b for k in subject_keys for b in index.bindings(namespace, k)]
        for binding in candidates:
            ident = (binding.kind, binding.namespace, binding.name)
            if ident in seen:  # a binding naming the user and one of their groups counts once
                continue
            seen.add(ident)
            found_rules, error = index.role_rules(binding)
            if found_rules is None:
                failures.append(error)
                continue
            pairs.extend((rule, binding) for rule in found_rules)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = (generations, (pairs, failures))
        return pairs, failures

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        pairs, failures = self._resolve(attrs.user, attrs.namespace)
        for rule, binding in pairs:
            if rules.allows(rule, attrs):
                return True, f"RBAC: allowed by {binding.describe()}"
        return False, f"RBAC: {_aggregate(failures)}" if failures else ""

    def rules_for(self, user: Any, namespace: str) -> tuple[list[dict[str, Any]], str]:
        """Every PolicyRule the user holds in `namespace` (cluster-wide ones included), and the errors."""
        pairs, failures = self._resolve(user, namespace)
        return [rule for rule, _ in pairs], _aggregate(failures) if failures else ""


def _aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message bare, several in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
