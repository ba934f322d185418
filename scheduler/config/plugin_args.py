"""Each in-tree plugin's args: upstream's v1 defaults and its validation, with field paths.

`defaulted(name, args, features)` fills what a `pluginConfig[].args` (or its absence) leaves out,
as the v1 SetDefaults_<Kind>Args functions do; the result keeps the v1 JSON field names, and is
what a plugin factory receives (durations stay Go strings such as "10s": `duration.parse`).
`VALIDATORS[name](path, args, features)` returns upstream's field errors for defaulted args.
NodeResourcesFit is checked by its factory upstream, not by config validation, so
`expansion.py` calls `validate_fit` with an empty path and reports it as a plugin init error.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from scheduler.config import duration, label_names
from scheduler.config.defaults import gate
from scheduler.config.errors import (FieldError, GoLiteral, duplicate, forbidden, go_strings, invalid,
                                     not_supported, required)
from scheduler.framework.interfaces import Features
from scheduler.plugins import names

Args = dict[str, Any]
MAX_CUSTOM_PRIORITY_SCORE = 10
_DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
STRATEGIES = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def defaulted(name: str, args: Args | None, features: Features) -> Args | None:
    """The args with defaults applied; None for a plugin that has no args kind."""
    if name not in DEFAULTERS:
        return None if args is None else {k: v for k, v in args.items() if k not in ("apiVersion", "kind")}
    out = {k: v for k, v in copy.deepcopy(args or {}).items() if k not in ("apiVersion", "kind") and v is not None}
    DEFAULTERS[name](out, features)
    return out


def _resources_with_weights(resources: list[Args]) -> list[Args]:
    return [{**r, "weight": r.get("weight") or 1} for r in resources]


def _default_preemption(a: Args, _: Features) -> None:
    a.setdefault("minCandidateNodesPercentage", 10)
    a.setdefault("minCandidateNodesAbsolute", 100)


def _inter_pod_affinity(a: Args, _: Features) -> None:
    a.setdefault("hardPodAffinityWeight", 1)
    a.setdefault("ignorePreferredTermsOfExistingPods", False)


def _node_affinity(a: Args, _: Features) -> None:
    pass


def _balanced(a: Args, _: Features) -> None:
    a["resources"] = _resources_with_weights(a.get("resources") or copy.deepcopy(_DEFAULT_RESOURCES))


def _fit(a: Args, _: Features) -> None:
    strategy = a.get("scoringStrategy")
    if strategy is None:
        strategy = {"type": "LeastAllocated", "resources": copy.deepcopy(_DEFAULT_RESOURCES)}
    strategy["resources"] = _resources_with_weights(strategy.get("resources") or copy.deepcopy(_DEFAULT_RESOURCES))
    a["scoringStrategy"] = strategy
    a.setdefault("ignoredResources", [])
    a.setdefault("ignoredResourceGroups", [])


def _spread(a: Args, _: Features) -> None:
    a["defaultingType"] = a.get("defaultingType") or "System"
    a.setdefault("defaultConstraints", [])


def _volume_binding(a: Args, features: Features) -> None:
    a.setdefault("bindTimeoutSeconds", 600)
    if not a.get("shape") and gate(features, "StorageCapacityScoring"):
        a["shape"] = [{"utilization": 0, "score": MAX_CUSTOM_PRIORITY_SCORE}, {"utilization": 100, "score": 0}]


def _dynamic_resources(a: Args, features: Features) -> None:
    if gate(features, "DRASchedulerFilterTimeout"):
        a.setdefault("filterTimeout", "10s")
    if gate(features, "DRADeviceBindingConditions") and gate(features, "DRAResourceClaimDeviceStatus"):
        a.setdefault("bindingTimeout", "10m0s")


DEFAULTERS: dict[str, Callable[[Args, Features], None]] = {
    names.DEFAULT_PREEMPTION: _default_preemption,
    names.INTER_POD_AFFINITY: _inter_pod_affinity,
    names.NODE_AFFINITY: _node_affinity,
    names.NODE_RESOURCES_BALANCED_ALLOCATION: _balanced,
    names.NODE_RESOURCES_FIT: _fit,
    names.POD_TOPOLOGY_SPREAD: _spread,
    names.VOLUME_BINDING: _volume_binding,
    names.DYNAMIC_RESOURCES: _dynamic_resources,
}


# --- validation -----------------------------------------------------------------------------

def _label_name(path: str, value: str) -> list[FieldError]:
    return [invalid(path, value, msg) for msg in label_names.qualified_name_errors(value)]


def validate_default_preemption(path: str, a: Args, _: Features) -> list[FieldError]:
    errs = []
    pct_path, abs_path = _child(path, "minCandidateNodesPercentage"), _child(path, "minCandidateNodesAbsolute")
    pct, absolute = a["minCandidateNodesPercentage"], a["minCandidateNodesAbsolute"]
    if pct < 0 or pct > 100:
        errs.append(invalid(pct_path, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(invalid(abs_path, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs += [invalid(pct_path, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"),
                 invalid(abs_path, absolute, "cannot be zero at the same time as minCandidateNodesPercentage")]
    return errs


def validate_inter_pod_affinity(path: str, a: Args, _: Features) -> list[FieldError]:
    weight = a["hardPodAffinityWeight"]
    if weight < 0 or weight > 100:
        return [invalid(_child(path, "hardPodAffinityWeight"), weight, "not in valid range [0, 100]")]
    return []


def validate_spread(path: str, a: Args, _: Features) -> list[FieldError]:
    errs: list[FieldError] = []
    kind, constraints = a["defaultingType"], a.get("defaultConstraints") or []
    kind_path = _child(path, "defaultingType")
    if kind not in ("System", "List"):
        errs.append(not_supported(kind_path, kind, ["System", "List"]))
    elif kind == "System" and constraints:
        errs.append(invalid(kind_path, kind, "when .defaultConstraints are not empty"))
    base = _child(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = f"{base}[{i}]"
        if (c.get("maxSkew") or 0) <= 0:
            errs.append(invalid(f"{p}.maxSkew", c.get("maxSkew") or 0, "not in valid range (0, inf)"))
        key = c.get("topologyKey") or ""
        errs += [required(f"{p}.topologyKey", "can not be empty")] if not key else _label_name(f"{p}.topologyKey", key)
        action = c.get("whenUnsatisfiable") or ""
        if not action:
            errs.append(required(f"{p}.whenUnsatisfiable", "can not be empty"))
        elif action not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(f"{p}.whenUnsatisfiable", action, ["DoNotSchedule", "ScheduleAnyway"]))
        if c.get("labelSelector") is not None:
            errs.append(forbidden(f"{p}.labelSelector",
                                  "constraint must not define a selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if other.get("topologyKey") == c.get("topologyKey") and \
                    other.get("whenUnsatisfiable") == c.get("whenUnsatisfiable"):
                errs.append(duplicate(f"{base}[{i}]", f"{{{key}, {action}}}"))
                break
    return errs


def _shape(path: str, shape: list[Args]) -> list[FieldError]:
    if not shape:
        return [required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(invalid(f"{path}[{i}].utilization", shape[i].get("utilization", 0),
                                "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        utilization, score = point.get("utilization", 0), point.get("score", 0)
        if utilization < 0 or utilization > 100:
            errs.append(invalid(f"{path}[{i}].utilization", utilization, "not in valid range [0, 100]"))
        if score < 0 or score > MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(invalid(f"{path}[{i}].score", score, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return errs


def validate_balanced(path: str, a: Args, _: Features) -> list[FieldError]:
    errs, seen = [], set()
    for i, r in enumerate(a["resources"]):
        p = f"{_child(path, 'resources')}[{i}]"
        if r.get("name") in seen:
            errs.append(duplicate(f"{p}.name", r.get("name")))
        seen.add(r.get("name"))
        if r.get("weight") != 1:
            errs.append(invalid(f"{p}.weight", r.get("weight"), "must be 1"))
    return errs


def validate_fit(path: str, a: Args, _: Features) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, res in enumerate(a.get("ignoredResources") or []):
        errs += _label_name(f"{_child(path, 'ignoredResources')}[{i}]", res)
    for i, group in enumerate(a.get("ignoredResourceGroups") or []):
        p = f"{_child(path, 'ignoredResourceGroups')}[{i}]"
        if "/" in group:
            errs.append(invalid(p, group, "resource group name can't contain '/'"))
        errs += _label_name(p, group)
    strategy_path = _child(path, "scoringStrategy")
    strategy = a.get("scoringStrategy")
    if strategy is None:
        return errs + [required(strategy_path, "ScoringStrategy field is required")]
    kind = strategy.get("type") or ""
    if kind not in STRATEGIES:
        errs.append(not_supported(f"{strategy_path}.type", kind, STRATEGIES))
    for i, r in enumerate(strategy.get("resources") or []):
        weight = r.get("weight", 0)
        if weight <= 0 or weight > 100:
            errs.append(invalid(f"{strategy_path}.resources[{i}].weight", weight,
                                f"resource weight of {r.get('name', '')} not in valid range (0, 100]"))
    ratio = strategy.get("requestedToCapacityRatio")
    if kind == "RequestedToCapacityRatio":
        if ratio is None:
            errs.append(required(f"{strategy_path}.requestedToCapacityRatio",
                                 "must be specified when type is RequestedToCapacityRatio"))
        else:
            errs += _shape(f"{strategy_path}.requestedToCapacityRatio.shape", ratio.get("shape") or [])
    elif ratio is not None:
        errs.append(forbidden(f"{strategy_path}.requestedToCapacityRatio",
                              "must be nil when type is not RequestedToCapacityRatio"))
    return errs


_SELECTOR_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


def _requirements(path: str, requirements: list[Args]) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, r in enumerate(requirements):
        p = f"{path}[{i}]"
        op, key, values = r.get("operator") or "", r.get("key") or "", list(r.get("values") or [])
        if op not in _SELECTOR_OPERATORS:
            errs.append(not_supported(f"{p}.operator", op, _SELECTOR_OPERATORS))
            continue
        errs += _label_name(f"{p}.key", key)
        values_path = f"{p}.values"
        if op in ("In", "NotIn") and not values:
            errs.append(invalid(values_path, go_strings(values), "for 'in', 'notin' operators, values set can't be empty"))
        elif op in ("Exists", "DoesNotExist") and values:
            errs.append(invalid(values_path, go_strings(values), "values set must be empty for exists and does not exist"))
        elif op in ("Gt", "Lt"):
            if len(values) != 1:
                errs.append(invalid(values_path, go_strings(values),
                                    "for 'Gt', 'Lt' operators, exactly one value is required"))
            for j, v in enumerate(values):
                if not v.lstrip("-").isdigit():
                    errs.append(invalid(f"{values_path}[{j}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
        for j, v in enumerate(values):
            errs += [invalid(f"{values_path}[{j}]", v, m) for m in label_names.label_value_errors(v)]
    return errs


def _field_requirements(path: str, requirements: list[Args]) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, r in enumerate(requirements):
        p = f"{path}[{i}]"
        if r.get("key") != "metadata.name":
            errs.append(not_supported(f"{p}.key", r.get("key") or "", ["metadata.name"]))
        if r.get("operator") not in ("In", "NotIn"):
            errs.append(not_supported(f"{p}.operator", r.get("operator") or "", ["In", "NotIn"]))
        if len(r.get("values") or []) != 1:
            errs.append(invalid(f"{p}.values", go_strings(list(r.get("values") or [])), "must have one element"))
    return errs


def _term(path: str, term: Args) -> list[FieldError]:
    return (_requirements(f"{path}.matchExpressions", term.get("matchExpressions") or [])
            + _field_requirements(f"{path}.matchFields", term.get("matchFields") or []))


def validate_node_affinity(path: str, a: Args, _: Features) -> list[FieldError]:
    added = a.get("addedAffinity")
    if not added:
        return []
    base = _child(path, "addedAffinity")
    errs: list[FieldError] = []
    selector = added.get("requiredDuringSchedulingIgnoredDuringExecution")
    if selector is not None:
        p = f"{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        for i, term in enumerate(selector.get("nodeSelectorTerms") or []):
            errs += _term(f"{p}[{i}]", term or {})
    for i, pref in enumerate(added.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        errs += _term(f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference",
                      (pref or {}).get("preference") or {})
    return errs


def validate_volume_binding(path: str, a: Args, features: Features) -> list[FieldError]:
    errs = []
    if a["bindTimeoutSeconds"] < 0:
        errs.append(invalid(_child(path, "bindTimeoutSeconds"), a["bindTimeoutSeconds"],
                            "invalid BindTimeoutSeconds, should not be a negative value"))
    if gate(features, "StorageCapacityScoring"):
        errs += _shape(_child(path, "shape"), a.get("shape") or [])
    elif a.get("shape") is not None:
        errs.append(invalid(_child(path, "shape"), GoLiteral(_shape_literal(a["shape"])),
                            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
    return errs


def _shape_literal(shape: list[Args]) -> str:
    points = ", ".join(f"config.UtilizationShapePoint{{Utilization:{p.get('utilization', 0)}, Score:{p.get('score', 0)}}}"
                       for p in shape)
    return f"[]config.UtilizationShapePoint{{{points}}}"


def validate_dynamic_resources(path: str, a: Args, features: Features) -> list[FieldError]:
    errs = []
    filter_timeout, binding_timeout = a.get("filterTimeout"), a.get("bindingTimeout")
    if gate(features, "DRASchedulerFilterTimeout"):
        if filter_timeout is not None and duration.parse(filter_timeout) < 0:
            errs.append(invalid(_child(path, "filterTimeout"), GoLiteral(filter_timeout), "must be zero or positive"))
    elif filter_timeout is not None:
        errs.append(forbidden(_child(path, "filterTimeout"), "DRASchedulingFilterTimeout feature gate is disabled"))
    if gate(features, "DRADeviceBindingConditions") and gate(features, "DRAResourceClaimDeviceStatus"):
        if binding_timeout is not None and duration.parse(binding_timeout) < 1:
            errs.append(invalid(_child(path, "bindingTimeout"), GoLiteral(binding_timeout), "must be at least 1 second"))
    elif binding_timeout is not None:
        errs.append(forbidden(_child(path, "bindingTimeout"),
                              "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"))
    return errs


# What upstream's validatePluginConfig checks; NodeResourcesFit is left to its factory (see above).
VALIDATORS: dict[str, Callable[[str, Args, Features], list[FieldError]]] = {
    names.DEFAULT_PREEMPTION: validate_default_preemption,
    names.INTER_POD_AFFINITY: validate_inter_pod_affinity,
    names.NODE_AFFINITY: validate_node_affinity,
    names.NODE_RESOURCES_BALANCED_ALLOCATION: validate_balanced,
    names.POD_TOPOLOGY_SPREAD: validate_spread,
    names.VOLUME_BINDING: validate_volume_binding,
    names.DYNAMIC_RESOURCES: validate_dynamic_resources,
}
