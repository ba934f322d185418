"""`--audit-policy-file`: upstream's audit.k8s.io/v1 Policy, checked at start, matched per request.

Rules are tried in order and the first that matches gives the level (no match: None), as
k8s.io/apiserver/pkg/audit/policy/checker.go does. A rule matches when each list it sets matches:
users, userGroups (any of the user's groups), verbs, then either namespaces/resources (resource
requests only; "" is the namespace of cluster-scoped objects; resources as "pods", "pods/log", "*",
"*/status", "pods/*", optionally limited to resourceNames) or nonResourceURLs (non-resource requests
only; an exact path, "*", or a prefix ending in "*"). omitStages of the policy and of the rule add
up; a rule's omitManagedFields overrides the policy's. A malformed file is refused with
upstream's error texts (`load` raises `PolicyError`); `cluster/cli.py` stops `haru up` with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from apiserver.authorization.attributes import Attributes

LEVELS = ("None", "Metadata", "Request", "RequestResponse")
STAGES = ("RequestReceived", "ResponseStarted", "ResponseComplete", "Panic")
_VERSIONS = ("audit.k8s.io/v1",)


class PolicyError(ValueError):
    """The policy file cannot be used; the text is what kube-apiserver prints."""


@dataclass(frozen=True)
class GroupResources:
    group: str
    resources: tuple[str, ...]
    resource_names: tuple[str, ...]


@dataclass(frozen=True)
class Rule:
    level: str
    users: tuple[str, ...] = ()
    user_groups: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resources: tuple[GroupResources, ...] = ()
    namespaces: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: tuple[str, ...] = ()
    omit_managed_fields: bool | None = None


@dataclass(frozen=True)
class Decision:
    """What to record for one request."""
    level: str
    omit_stages: frozenset[str]
    omit_managed_fields: bool


@dataclass(frozen=True)
class Policy:
    rules: tuple[Rule, ...]
    omit_stages: tuple[str, ...] = ()
    omit_managed_fields: bool = False

    def evaluate(self, request: Attributes) -> Decision:
        for rule in self.rules:
            if _matches(rule, request):
                managed = self.omit_managed_fields if rule.omit_managed_fields is None else rule.omit_managed_fields
                return Decision(rule.level, frozenset(self.omit_stages) | frozenset(rule.omit_stages), managed)
        return Decision("None", frozenset(self.omit_stages), self.omit_managed_fields)


def _matches(rule: Rule, request: Attributes) -> bool:
    if rule.users and request.user.name not in rule.users:
        return False
    if rule.user_groups and not any(group in rule.user_groups for group in request.user.groups):
        return False
    if rule.verbs and request.verb not in rule.verbs:
        return False
    if rule.namespaces or rule.resources:
        return _matches_resource(rule, request)
    if rule.non_resource_urls:
        return not request.is_resource and any(_path_matches(request.path, spec) for spec in rule.non_resource_urls)
    return True


def _matches_resource(rule: Rule, request: Attributes) -> bool:
    if not request.is_resource:
        return False
    if rule.namespaces and request.namespace not in rule.namespaces:
        return False
    if not rule.resources:
        return True
    combined = f"{request.resource}/{request.subresource}" if request.subresource else request.resource
    for entry in rule.resources:
        if entry.group != request.api_group:
            continue
        if not entry.resources:
            return True
        if entry.resource_names and request.name not in entry.resource_names:
            continue
        for spec in entry.resources:
            if spec in (combined, "*"):
                return True
            if request.subresource and spec.startswith("*/") and spec[2:] == request.subresource:
                return True
            if spec.endswith("/*") and spec[:-2] == request.resource:
                return True
    return False


def _path_matches(path: str, spec: str) -> bool:
    return spec in ("*", path) or (spec.endswith("*") and path.startswith(spec.rstrip("*")))


# -- loading ---------------------------------------------------------------------------------------
def load(path: str) -> Policy:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise PolicyError(f"failed to read file path {path!r}: {exc}") from None
    try:
        return parse(raw)
    except PolicyError as exc:
        raise PolicyError(f"{exc}: from file {path}") from None


def parse(raw: bytes) -> Policy:
    try:
        doc = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise PolicyError(f"failed decoding: error converting YAML to JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise PolicyError("failed decoding: Object 'Kind' is missing in policy")
    version, kind = doc.get("apiVersion"), doc.get("kind")
    if not kind:
        raise PolicyError(f"failed decoding: Object 'Kind' is missing in '{_short(raw)}'")
    if version not in _VERSIONS or kind != "Policy":
        raise PolicyError(f"failed decoding: no kind \"{kind}\" is registered for version \"{version}\"")
    errs: list[str] = []
    omit = _stages(doc.get("omitStages"), "omitStages", errs)
    rules = tuple(_rule(item, f"rules[{i}]", errs) for i, item in enumerate(_list(doc.get("rules"), "rules", errs)))
    if errs:
        raise PolicyError(errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
    if not rules:
        raise PolicyError("loaded illegal policy with 0 rules")
    return Policy(rules, omit, bool(doc.get("omitManagedFields", False)))


def _short(raw: bytes) -> str:
    return raw[:100].decode(errors="replace").strip()


def _list(value: Any, field: str, errs: list[str]) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        errs.append(f"{field}: Invalid value: {value!r}: must be a list")
        return []
    return value


def _strings(value: Any, field: str, errs: list[str]) -> tuple[str, ...]:
    items = _list(value, field, errs)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            errs.append(f"{field}[{i}]: Invalid value: {item!r}: must be a string")
    return tuple(str(item) for item in items)


def _stages(value: Any, field: str, errs: list[str]) -> tuple[str, ...]:
    stages = _strings(value, field, errs)
    for i, stage in enumerate(stages):
        if stage not in STAGES:
            errs.append(f'{field}[{i}]: Unsupported value: "{stage}": supported values: '
                        + ", ".join(f'"{s}"' for s in STAGES))
    return stages


def _rule(item: Any, field: str, errs: list[str]) -> Rule:
    if not isinstance(item, dict):
        errs.append(f"{field}: Invalid value: {item!r}: must be an object")
        return Rule("None")
    level = item.get("level")
    if level is None or level == "":
        errs.append(f"{field}.level: Required value")
    elif level not in LEVELS:
        errs.append(f'{field}.level: Unsupported value: "{level}": supported values: '
                    + ", ".join(f'"{lv}"' for lv in LEVELS))
    resources = tuple(_group_resources(entry, f"{field}.resources[{i}]", errs)
                      for i, entry in enumerate(_list(item.get("resources"), f"{field}.resources", errs)))
    namespaces = _strings(item.get("namespaces"), f"{field}.namespaces", errs)
    urls = _strings(item.get("nonResourceURLs"), f"{field}.nonResourceURLs", errs)
    if urls and (resources or namespaces):
        errs.append(f"{field}.nonResourceURLs: Invalid value: {list(urls)!r}: rules cannot apply to both "
                    "regular resources and non-resource URLs")
    for i, url in enumerate(urls):
        if url == "*":
            continue
        if not url.startswith("/"):
            errs.append(f'{field}.nonResourceURLs[{i}]: Invalid value: "{url}": non-resource URL rules must '
                        'begin with a \'/\' character')
        if "*" in url[:-1]:
            errs.append(f'{field}.nonResourceURLs[{i}]: Invalid value: "{url}": non-resource URL wildcards '
                        "(\'*\') must be the final character of the rule")
    managed = item.get("omitManagedFields")
    return Rule(
        level=str(level), users=_strings(item.get("users"), f"{field}.users", errs),
        user_groups=_strings(item.get("userGroups"), f"{field}.userGroups", errs),
        verbs=_strings(item.get("verbs"), f"{field}.verbs", errs), resources=resources, namespaces=namespaces,
        non_resource_urls=urls, omit_stages=_stages(item.get("omitStages"), f"{field}.omitStages", errs),
        omit_managed_fields=None if managed is None else bool(managed),
    )


def _group_resources(entry: Any, field: str, errs: list[str]) -> GroupResources:
    if not isinstance(entry, dict):
        errs.append(f"{field}: Invalid value: {entry!r}: must be an object")
        return GroupResources("", (), ())
    group = entry.get("group") or ""
    resources = _strings(entry.get("resources"), f"{field}.resources", errs)
    names = _strings(entry.get("resourceNames"), f"{field}.resourceNames", errs)
    if group and "/" in group:
        errs.append(f'{field}.group: Invalid value: "{group}": group name must not contain \'/\'')
    if names and not resources:
        errs.append(f"{field}.resourceNames: Invalid value: {list(names)!r}: using resourceNames requires at "
                    "least one resource")
    return GroupResources(str(group), resources, names)
