"""RBAC PolicyRule matching, exactly as kube's rbac/validation/rule.go reads a rule.

Verbs and API groups match literally or by `*`; a resource matches by name, by `*`, by
`resource/subresource`, or by `*/subresource`; an empty resourceNames list matches any name;
a nonResourceURL matches literally, by `*`, or as a prefix when it ends in `*`. Used by `rbac`
(decisions and rule listings) and `escalation` (does one rule set cover another).
"""

from __future__ import annotations

from typing import Any

Rule = dict[str, Any]  # a PolicyRule as stored: verbs, apiGroups, resources, resourceNames, nonResourceURLs


def _has(values: list[str] | None, wanted: str) -> bool:
    return bool(values) and ("*" in values or wanted in values)  # type: ignore[operator]


def resource_matches(rule_resources: list[str] | None, resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for candidate in rule_resources or ():
        if candidate == "*" or candidate == combined:
            return True
        # `*/status` grants the status subresource of every resource the rule's groups hold.
        if subresource and candidate == f"*/{subresource}":
            return True
    return False


def name_matches(names: list[str] | None, name: str) -> bool:
    return not names or name in names


def url_matches(urls: list[str] | None, path: str) -> bool:
    for candidate in urls or ():
        if candidate == "*" or candidate == path:
            return True
        if candidate.endswith("*") and path.startswith(candidate[:-1]):
            return True
    return False


def allows(rule: Rule, attrs: Any) -> bool:
    """Does one PolicyRule allow the request `attrs` (an attributes.Attributes)?"""
    if not _has(rule.get("verbs"), attrs.verb):
        return False
    if attrs.is_resource:
        return (_has(rule.get("apiGroups"), attrs.api_group)
                and resource_matches(rule.get("resources"), attrs.resource, attrs.subresource)
                and name_matches(rule.get("resourceNames"), attrs.name))
    return url_matches(rule.get("nonResourceURLs"), attrs.path)


# -- coverage, for the escalation check ---------------------------------------------------
def breakdown(rule: Rule) -> list[Rule]:
    """One rule per (group, resource, verb[, name]) or (url, verb): what `covers` compares."""
    out: list[Rule] = []
    for group in rule.get("apiGroups") or ():
        for resource in rule.get("resources") or ():
            for verb in rule.get("verbs") or ():
                names = rule.get("resourceNames") or []
                if names:
                    out.extend({"apiGroups": [group], "resources": [resource], "resourceNames": [n], "verbs": [verb]}
                               for n in names)
                else:
                    out.append({"apiGroups": [group], "resources": [resource], "verbs": [verb]})
    for url in rule.get("nonResourceURLs") or ():
        for verb in rule.get("verbs") or ():
            out.append({"nonResourceURLs": [url], "verbs": [verb]})
    return out


def _covers_one(owner: Rule, wanted: Rule) -> bool:
    """Does `owner` cover the atomic rule `wanted` (from `breakdown`)?"""
    verb = wanted["verbs"][0]
    if not _has(owner.get("verbs"), verb):
        return False
    if "nonResourceURLs" in wanted:
        url = wanted["nonResourceURLs"][0]
        for candidate in owner.get("nonResourceURLs") or ():
            if candidate == url or candidate == "*":
                return True
            # a prefix grant covers any narrower prefix or path it starts
            if candidate.endswith("*") and url.startswith(candidate[:-1]):
                return True
        return False
    if not _has(owner.get("apiGroups"), wanted["apiGroups"][0]):
        return False
    resource = wanted["resources"][0]
    owned = owner.get("resources") or []
    if not ("*" in owned or resource in owned):
        base, _, sub = resource.partition("/")
        if not (sub and f"*/{sub}" in owned):
            return False
    owner_names = owner.get("resourceNames") or []
    if not owner_names:
        return True
    wanted_names = wanted.get("resourceNames") or []
    return bool(wanted_names) and wanted_names[0] in owner_names


def covers(owner_rules: list[Rule], wanted_rules: list[Rule]) -> list[Rule]:
    """The atomic pieces of `wanted_rules` no owner rule covers (empty: fully covered)."""
    missing: list[Rule] = []
    for wanted in wanted_rules:
        for piece in breakdown(wanted):
            if not any(_covers_one(owner, piece) for owner in owner_rules):
                missing.append(piece)
    return missing


def compact(rules: list[Rule]) -> list[Rule]:
    """Merge atomic resource rules that differ only in verb, as kube's CompactRules does."""
    merged: dict[tuple[str, str], Rule] = {}
    out: list[Rule] = []
    for rule in rules:
        if "nonResourceURLs" in rule or rule.get("resourceNames"):
            out.append(rule)
            continue
        key = (rule["apiGroups"][0], rule["resources"][0])
        if key in merged:
            merged[key]["verbs"].extend(v for v in rule["verbs"] if v not in merged[key]["verbs"])
        else:
            merged[key] = {"apiGroups": list(rule["apiGroups"]), "resources": list(rule["resources"]),
                           "verbs": list(rule["verbs"])}
            out.append(merged[key])
    return out


def go_strings(values: list[str] | tuple[str, ...]) -> str:
    """A Go []string printed with %q: `["a" "b"]`."""
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def compact_string(rule: Rule) -> str:
    """kube's rbacv1helpers CompactString: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`."""
    parts = []
    for field, label in (("apiGroups", "APIGroups"), ("resources", "Resources"), ("resourceNames", "ResourceNames"),
                         ("nonResourceURLs", "NonResourceURLs"), ("verbs", "Verbs")):
        values = rule.get(field)
        if values:
            parts.append(f"{label}:{go_strings(values)}")
    return "{" + ", ".join(parts) + "}"
