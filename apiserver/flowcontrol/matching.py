"""Does a FlowSchema's rule match a request? Upstream's matching rules, compiled once per object.

A `PolicyRulesWithSubjects` matches when one of its subjects is the requester and one of its
resource rules (for a resource request) or non-resource rules (otherwise) covers the request:
  - subjects: `User` by name, `Group` by any of the user's groups, `ServiceAccount` by
    `system:serviceaccount:<namespace>:<name>` ("*" for any name in the namespace); "*" matches all;
  - resource rules: verb, API group and `resource` or `resource/subresource` each listed or "*";
    a namespaced request needs its namespace (or "*") in `namespaces`, any other needs `clusterScope`;
  - non-resource rules: verb, and a URL listed exactly, "*", or a `prefix/*` pattern.
`config.py` compiles the stored FlowSchemas with `compile_rules`; `classify.py` calls `matches`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class Request:
    """What classification looks at: who asks and what for (upstream's RequestDigest)."""

    user: str
    groups: tuple[str, ...]
    is_resource: bool
    verb: str
    api_group: str = ""
    resource: str = ""  # "pods" or "pods/status"
    namespace: str = ""
    path: str = ""


@dataclass(frozen=True)
class _Names:
    everything: bool
    names: frozenset[str]

    @classmethod
    def of(cls, values: Any, wildcard: str = "*") -> "_Names":
        listed = frozenset(str(v) for v in values or ())
        return cls(wildcard in listed, listed)

    def has(self, value: str) -> bool:
        return self.everything or value in self.names


@dataclass(frozen=True)
class _ResourceRule:
    verbs: _Names
    groups: _Names
    resources: _Names
    cluster_scope: bool
    namespaces: _Names

    def covers(self, r: Request) -> bool:
        if not (self.verbs.has(r.verb) and self.groups.has(r.api_group) and self.resources.has(r.resource)):
            return False
        return self.namespaces.has(r.namespace) if r.namespace else self.cluster_scope


@dataclass(frozen=True)
class _NonResourceRule:
    verbs: _Names
    exact: frozenset[str]
    prefixes: tuple[str, ...]  # from "/foo/*": "/foo/"
    everything: bool

    def covers(self, r: Request) -> bool:
        if not self.verbs.has(r.verb):
            return False
        if self.everything or r.path in self.exact:
            return True
        # "/foo/*" covers "/foo/…" and "/foo" itself, as upstream's matcher does.
        return any(r.path.startswith(p) or r.path == p[:-1] for p in self.prefixes)


@dataclass(frozen=True)
class Rule:
    users: frozenset[str]
    groups: frozenset[str]
    service_accounts: frozenset[tuple[str, str]]  # (namespace, name); name may be "*"
    anyone: bool
    resource_rules: tuple[_ResourceRule, ...]
    non_resource_rules: tuple[_NonResourceRule, ...]

    def matches(self, r: Request) -> bool:
        if not self._subject(r):
            return False
        rules = self.resource_rules if r.is_resource else self.non_resource_rules
        return any(rule.covers(r) for rule in rules)

    def _subject(self, r: Request) -> bool:
        if self.anyone or r.user in self.users:
            return True
        if self.groups and any(g in self.groups for g in r.groups):
            return True
        if self.service_accounts and r.user.startswith(SA_PREFIX):
            namespace, _, name = r.user[len(SA_PREFIX):].partition(":")
            return (namespace, name) in self.service_accounts or (namespace, "*") in self.service_accounts
        return False


def compile_rules(rules: Any) -> tuple[Rule, ...]:
    return tuple(_compile(rule) for rule in rules or () if isinstance(rule, dict))


def _compile(rule: dict[str, Any]) -> Rule:
    users: set[str] = set()
    groups: set[str] = set()
    accounts: set[tuple[str, str]] = set()
    for subject in rule.get("subjects") or ():
        kind = subject.get("kind")
        if kind == "User":
            users.add((subject.get("user") or {}).get("name", ""))
        elif kind == "Group":
            groups.add((subject.get("group") or {}).get("name", ""))
        elif kind == "ServiceAccount":
            sa = subject.get("serviceAccount") or {}
            accounts.add((sa.get("namespace", ""), sa.get("name", "")))
    anyone = "*" in users or "*" in groups
    resource_rules = tuple(_ResourceRule(
        _Names.of(r.get("verbs")), _Names.of(r.get("apiGroups")), _Names.of(r.get("resources")),
        bool(r.get("clusterScope")), _Names.of(r.get("namespaces")))
        for r in rule.get("resourceRules") or ())
    non_resource_rules = []
    for r in rule.get("nonResourceRules") or ():
        urls = [str(u) for u in r.get("nonResourceURLs") or ()]
        non_resource_rules.append(_NonResourceRule(
            _Names.of(r.get("verbs")), frozenset(u for u in urls if not u.endswith("*")),
            tuple(u[:-1] for u in urls if u.endswith("/*")), "*" in urls))
    return Rule(frozenset(users), frozenset(groups), frozenset(accounts), anyone, resource_rules,
                tuple(non_resource_rules))
