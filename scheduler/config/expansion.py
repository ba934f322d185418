"""From a validated profile to the `Profile` the runtime builds: upstream's NewFramework checks.

Per profile, in upstream's order: each plugin is "initialized" (NodeResourcesFit's args are
checked here, as its factory does), each point's explicit list is resolved (unknown names, a
plugin that lacks the point, a name twice), multiPoint is expanded into every point its plugins
implement (explicit entries override, `disabled` and `*` still apply), then exactly one queueSort,
at least one bind, and score weights (0 means 1; a point's own weight beats multiPoint's), kept for
score and for placementScore (the PodGroup cycle's placement scorers) apart. Errors
read `initializing profiles: creating profile for scheduler name X: …`.
"""

from __future__ import annotations

from typing import Any

from scheduler.config import plugin_args
from scheduler.config.errors import ConfigError, aggregate
from scheduler.config.plugin_points import INTERFACE, POINTS_OF, WALK_ORDER, available
from scheduler.config.types import PluginRef, Profile
from scheduler.framework.interfaces import Features
from scheduler.plugins import names

MAX_NODE_SCORE = 100
MAX_TOTAL_SCORE = (1 << 63) - 1


class _ProfileError(Exception):
    pass


def build_profile(profile: dict[str, Any], features: Features) -> Profile:
    name = profile["schedulerName"]
    try:
        return _build(profile, features)
    except _ProfileError as exc:
        raise ConfigError(f"initializing profiles: creating profile for scheduler name {name}: {exc}") from None


def _enabled(plugins: dict[str, Any], point: str) -> list[dict[str, Any]]:
    return list((plugins.get(point) or {}).get("enabled") or [])


def _build(profile: dict[str, Any], features: Features) -> Profile:
    plugins = profile.get("plugins") or {}
    args_by_name = {c["name"]: c.get("args") for c in profile.get("pluginConfig") or []}
    needed = {p.get("name", "") for point in (*WALK_ORDER, "multiPoint") for p in _enabled(plugins, point)}
    if names.NODE_RESOURCES_FIT in needed:
        errs = plugin_args.validate_fit("", args_by_name.get(names.NODE_RESOURCES_FIT) or {}, features)
        if errs:
            raise _ProfileError(f'initializing plugin "{names.NODE_RESOURCES_FIT}": '
                                + aggregate([str(e) for e in errs]))
    lists: dict[str, list[str]] = {}
    for point in WALK_ORDER:
        lists[point] = []
        for plugin in _enabled(plugins, point):
            plugin_name = plugin.get("name", "")
            _check_known(point, plugin_name)
            if point not in POINTS_OF[plugin_name]:
                raise _ProfileError(f'plugin "{plugin_name}" does not extend {INTERFACE[point]} plugin')
            if plugin_name in lists[point]:
                raise _ProfileError(f'plugin "{plugin_name}" already registered as "{INTERFACE[point]}"')
            lists[point].append(plugin_name)
    multi = _enabled(plugins, "multiPoint")
    if multi:
        for point in WALK_ORDER:
            lists[point] = _expand(point, lists[point], plugins, multi)
    scheduler_name = profile["schedulerName"]
    if len(lists["queueSort"]) != 1:
        raise _ProfileError(f'only one queue sort plugin required for profile with scheduler name "{scheduler_name}", '
                            f'but got {len(lists["queueSort"])}')
    if not lists["bind"]:
        raise _ProfileError(f'at least one bind plugin is needed for profile with scheduler name "{scheduler_name}"')
    weights = {"score": _score_weights(_enabled(plugins, "score") + multi),
               "placementScore": _score_weights(_enabled(plugins, "placementScore") + multi, "placementScore")}
    points = {point: [PluginRef(n, weights[point].get(n, 1) if point in weights else 0) for n in lists[point]]
              for point in WALK_ORDER if lists[point]}
    out = Profile(scheduler_name=scheduler_name, points=points,
                  percentage_of_nodes_to_score=profile.get("percentageOfNodesToScore"))
    for plugin_name in out.names():
        out.plugin_args[plugin_name] = args_by_name.get(plugin_name) or {}
    return out


def _check_known(point: str, name: str) -> None:
    if name not in available():
        raise _ProfileError(f'{INTERFACE[point]} "{name}" does not exist')


def _expand(point: str, explicit: list[str], plugins: dict[str, Any], multi: list[dict[str, Any]]) -> list[str]:
    disabled = {p.get("name", "") for p in (plugins.get(point) or {}).get("disabled") or []}
    if "*" in disabled:
        return explicit
    from_multi: list[str] = []
    overridden: list[str] = []
    for plugin in multi:
        name = plugin.get("name", "")
        _check_known(point, name)
        if point not in POINTS_OF[name] or name in disabled:
            continue
        if name in explicit:
            overridden.append(name)  # the point's own entry is the user's intent
            continue
        if name in from_multi:
            raise _ProfileError(f'plugin "{name}" already registered as "{INTERFACE[point]}"')
        from_multi.append(name)
    # Overrides first in the point's own order, then multiPoint's, then the point's other plugins.
    first = [n for n in explicit if n in overridden]
    return first + from_multi + [n for n in explicit if n not in overridden]


def _score_weights(entries: list[dict[str, Any]], point: str = "score") -> dict[str, int]:
    weights: dict[str, int] = {}
    total = 0
    for entry in entries:
        name = entry.get("name", "")
        if point not in POINTS_OF.get(name, ()) or name in weights:
            continue
        weights[name] = entry.get("weight") or 1
        if weights[name] * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise _ProfileError("total score of Score plugins could overflow")
        total += weights[name] * MAX_NODE_SCORE
    return weights
