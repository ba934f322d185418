"""Does a policy or binding apply to a request? MatchResources, rules and label selectors.

`matches(criteria, attrs, namespace_labels, view, is_binding)` follows upstream's matcher
(admission/plugin/cel/matching): namespaceSelector (the namespace's labels; a Namespace request
uses its own; other cluster-scoped requests always pass), objectSelector (object or oldObject
labels), excludeResourceRules, then resourceRules (a binding without resourceRules matches
whatever its policy matches). Rules match operation, group, version, resource[/subresource],
scope and resourceNames; with matchPolicy Equivalent another served version of the same
resource matches too, and the result names the version the policy sees. Used by the dispatchers.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from admission.attributes import Attributes
from admission.view import ClusterView

# Policies from the API never see these (rules.IsExemptAdmissionConfigurationResource upstream).
EXEMPT_RESOURCES = frozenset({
    "validatingwebhookconfigurations", "mutatingwebhookconfigurations", "validatingadmissionpolicies",
    "validatingadmissionpolicybindings", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
})
ADMISSION_GROUP = "admissionregistration.k8s.io"


class Matched(NamedTuple):
    """The group/version/resource/kind the policy matched (differs from the request's under Equivalent)."""

    group: str
    version: str
    resource: str
    kind: str


def is_exempt(attrs: Attributes) -> bool:
    return attrs.group == ADMISSION_GROUP and attrs.resource in EXEMPT_RESOURCES


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """metav1.LabelSelector semantics; an empty or missing selector selects everything."""
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for requirement in selector.get("matchExpressions") or []:
        key, operator = requirement.get("key"), requirement.get("operator")
        values = requirement.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _labels(obj: dict[str, Any] | None) -> dict[str, str] | None:
    if obj is None:
        return None
    return (obj.get("metadata") or {}).get("labels") or {}


def _namespace_matches(selector: dict[str, Any] | None, attrs: Attributes,
                       namespace_labels: Callable[[], dict[str, str] | None]) -> bool:
    if not selector:
        return True
    if attrs.group == "" and attrs.resource == "namespaces":
        labels = _labels(attrs.object) if attrs.object is not None else _labels(attrs.old_object)
        return selector_matches(selector, labels or {})
    if not attrs.namespace:
        return True  # other cluster-scoped resources are never skipped by a namespaceSelector
    labels = namespace_labels()
    return selector_matches(selector, labels or {})


def _object_matches(selector: dict[str, Any] | None, attrs: Attributes) -> bool:
    if not selector:
        return True
    for obj in (attrs.object, attrs.old_object):
        labels = _labels(obj)
        if labels is not None and selector_matches(selector, labels):
            return True
    return False


def _one_of(items: list[str], wanted: str) -> bool:
    return "*" in items or wanted in items


def _scope_matches(rule: dict[str, Any], attrs: Attributes) -> bool:
    scope = rule.get("scope") or "*"
    is_namespace_object = attrs.group == "" and attrs.resource == "namespaces"
    if scope == "Namespaced":
        return not is_namespace_object and bool(attrs.namespace)
    if scope == "Cluster":
        return is_namespace_object or not attrs.namespace
    return True


def _resource_matches(resources: list[str], resource: str, subresource: str) -> bool:
    for entry in resources:
        res, _, sub = entry.partition("/")
        if (res == "*" or res == resource) and (sub == "*" or sub == subresource):
            return True
    return False


def rule_matches(rule: dict[str, Any], attrs: Attributes, version: str | None = None) -> bool:
    operations = rule.get("operations") or []
    return (_scope_matches(rule, attrs)
            and ("*" in operations or attrs.operation in operations)
            and _one_of(rule.get("apiGroups") or [], attrs.group)
            and _one_of(rule.get("apiVersions") or [], version or attrs.version)
            and _resource_matches(rule.get("resources") or [], attrs.resource, attrs.subresource))


def _named(rule: dict[str, Any], attrs: Attributes) -> bool:
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


def rules_match(rules: list[dict[str, Any]], match_policy: str | None, attrs: Attributes,
                view: ClusterView | None) -> Matched | None:
    """The matched resource when any rule matches the request (or, under Equivalent, another version of it)."""
    for rule in rules:
        if rule_matches(rule, attrs) and _named(rule, attrs):
            return Matched(attrs.group, attrs.version, attrs.resource, attrs.kind)
    if match_policy != "Equivalent" or view is None:
        return None
    for version in view.versions(attrs.group, attrs.resource):
        if version == attrs.version:
            continue
        for rule in rules:
            if rule_matches(rule, attrs, version) and _named(rule, attrs):
                ref = view.resource(attrs.group, version, attrs.resource)
                return Matched(attrs.group, version, attrs.resource, ref.kind if ref else attrs.kind)
    return None


_MEMO_LIMIT = 4096


def _uses_names(criteria: dict[str, Any]) -> bool:
    rules = (criteria.get("resourceRules") or []) + (criteria.get("excludeResourceRules") or [])
    return any(rule.get("resourceNames") for rule in rules)


def matches(criteria: dict[str, Any] | None, attrs: Attributes, namespace_labels: Callable[[], dict[str, str] | None],
            view: ClusterView | None, *, is_binding: bool, memo: dict[Any, Any] | None = None) -> Matched | None:
    """The matched resource if the request passes these MatchResources, else None.

    `memo` (one dict per criteria object, kept by the caller) remembers the rule part, which
    depends only on what the request is, not on labels."""
    request = _request_of(attrs)
    if criteria is None:
        return request if is_binding else None
    if not _namespace_matches(criteria.get("namespaceSelector"), attrs, namespace_labels):
        return None
    if not _object_matches(criteria.get("objectSelector"), attrs):
        return None
    key = None
    if memo is not None:
        uses_names = memo.get("uses-names")
        if uses_names is None:
            uses_names = memo["uses-names"] = _uses_names(criteria)
        key = (_rule_key(attrs), attrs.name if uses_names else "")
        if key in memo:
            return memo[key]  # type: ignore[no-any-return]
    result = _rules_part(criteria, attrs, view, is_binding, request)
    if memo is not None:
        if len(memo) > _MEMO_LIMIT:
            memo.clear()
        memo[key] = result
    return result


def _request_of(attrs: Attributes) -> Matched:
    """The request's own resource; made once per request (every policy and binding asks)."""
    found = attrs.memo.get("matched-request")
    if found is None:
        found = attrs.memo["matched-request"] = Matched(attrs.group, attrs.version, attrs.resource, attrs.kind)
    return found  # type: ignore[no-any-return]


def _rule_key(attrs: Attributes) -> tuple[Any, ...]:
    """What the rule part of a match depends on (all but the name), made once per request."""
    found = attrs.memo.get("rule-key")
    if found is None:
        found = attrs.memo["rule-key"] = (attrs.operation, attrs.group, attrs.version, attrs.resource,
                                          attrs.subresource, attrs.kind, bool(attrs.namespace))
    return found  # type: ignore[no-any-return]


def _rules_part(criteria: dict[str, Any], attrs: Attributes, view: ClusterView | None, is_binding: bool,
                request: Matched) -> Matched | None:
    match_policy = criteria.get("matchPolicy") or "Equivalent"
    if rules_match(criteria.get("excludeResourceRules") or [], match_policy, attrs, view):
        return None
    if is_binding and criteria.get("resourceRules") is None:
        return request
    return rules_match(criteria.get("resourceRules") or [], match_policy, attrs, view)
