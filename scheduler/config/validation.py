"""ValidateKubeSchedulerConfiguration: the whole-file checks, with upstream's field paths and texts.

Runs on the defaulted document (`loading.py` merges plugins and defaults args first, as upstream
decodes, defaults, then validates): parallelism, profiles present with unique non-empty names,
percentageOfNodesToScore ranges, removed plugin names, repeated and invalid pluginConfig args,
one queueSort shared by every profile, the backoff pair. Every error is gathered, then raised
together as one aggregate, as upstream's options.Validate does.
"""

from __future__ import annotations

from typing import Any

from scheduler.config import plugin_args
from scheduler.config.errors import ConfigError, FieldError, GoLiteral, duplicate, invalid, required
from scheduler.framework.interfaces import Features
from scheduler.config.types import POINTS

# invalidPluginsByVersion for v1: names kube-scheduler refuses outright.
REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
VERSION = "kubescheduler.config.k8s.io/v1"


def validate(doc: dict[str, Any], features: Features) -> None:
    errs: list[FieldError] = []
    parallelism = doc["parallelism"]
    if parallelism <= 0:
        errs.append(invalid("parallelism", parallelism, "should be an integer value greater than zero"))
    profiles = doc["profiles"]
    if not profiles:
        errs.append(required("profiles"))
    else:
        seen: dict[str, int] = {}
        for i, profile in enumerate(profiles):
            errs += _profile(f"profiles[{i}]", profile, features)
            name = profile.get("schedulerName") or ""
            if name in seen:
                errs.append(duplicate(f"profiles[{i}].schedulerName", GoLiteral(f"profiles[{seen[name]}].schedulerName")))
            seen[name] = i
        errs += _common_queue_sort(profiles)
    errs += _percentage("percentageOfNodesToScore", doc.get("percentageOfNodesToScore"))
    initial, maximum = doc["podInitialBackoffSeconds"], doc["podMaxBackoffSeconds"]
    if initial <= 0:
        errs.append(invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    if maximum < initial:
        errs.append(invalid("podMaxBackoffSeconds", maximum, "must be greater than or equal to PodInitialBackoffSeconds"))
    if errs:
        raise ConfigError.of(errs)


def _percentage(path: str, value: int | None) -> list[FieldError]:
    if value is not None and (value < 0 or value > 100):
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _removed(path: str, name: str) -> FieldError:
    return invalid(path, name, f'was invalid in version "{VERSION}" (KubeSchedulerConfiguration is version "{VERSION}")')


def _profile(path: str, profile: dict[str, Any], features: Features) -> list[FieldError]:
    errs: list[FieldError] = []
    if not profile.get("schedulerName"):
        errs.append(required(f"{path}.schedulerName"))
    errs += _percentage(f"{path}.percentageOfNodesToScore", profile.get("percentageOfNodesToScore"))
    plugins = profile.get("plugins") or {}
    for point in POINTS:
        for i, plugin in enumerate((plugins.get(point) or {}).get("enabled") or []):
            if plugin.get("name") in REMOVED_PLUGINS:
                errs.append(_removed(f"{path}.plugins.{point}.enabled[{i}]", plugin["name"]))
    seen: set[str] = set()
    for i, entry in enumerate(profile.get("pluginConfig") or []):
        entry_path = f"{path}.pluginConfig[{i}]"
        name = entry.get("name") or ""
        if name in seen:
            errs.append(duplicate(entry_path, name))
        seen.add(name)
        if name in REMOVED_PLUGINS:
            errs.append(_removed(entry_path, name))
        elif name in plugin_args.VALIDATORS:
            errs += plugin_args.VALIDATORS[name](f"{entry_path}.args", entry.get("args") or {}, features)
    return errs


def _plugin_set_literal(plugin_set: dict[str, Any]) -> str:
    """config.PluginSet as Go's %#v prints it (upstream puts the whole struct in the message)."""
    def plugins(items: list[dict[str, Any]]) -> str:
        if not items:
            return "[]config.Plugin(nil)"
        inner = ", ".join(f'config.Plugin{{Name:"{p.get("name", "")}", Weight:{p.get("weight") or 0}}}' for p in items)
        return f"[]config.Plugin{{{inner}}}"
    return (f"config.PluginSet{{Enabled:{plugins(plugin_set.get('enabled') or [])}, "
            f"Disabled:{plugins(plugin_set.get('disabled') or [])}}}")


def _queue_sort(profile: dict[str, Any]) -> dict[str, Any]:
    return ((profile.get("plugins") or {}).get("queueSort") or {})


def _same_set(a: dict[str, Any], b: dict[str, Any]) -> bool:
    # Semantic.DeepEqual: nil and empty lists are the same; an unset weight is 0.
    def norm(s: dict[str, Any]) -> tuple[tuple[tuple[str, int], ...], ...]:
        return tuple(tuple((p.get("name", ""), p.get("weight") or 0) for p in (s.get(k) or []))
                     for k in ("enabled", "disabled"))
    return norm(a) == norm(b)


def _common_queue_sort(profiles: list[dict[str, Any]]) -> list[FieldError]:
    errs: list[FieldError] = []
    canon = _queue_sort(profiles[0])
    enabled = canon.get("enabled") or []
    if len(enabled) > 1:
        errs.append(invalid("profiles[0].plugins.queueSort.Enabled", len(enabled), "only one queue sort plugin can be enabled"))
    name = enabled[0].get("name", "") if enabled else ""
    canon_args = next((c.get("args") for c in profiles[0].get("pluginConfig") or [] if name and c.get("name") == name), None)
    for i in range(1, len(profiles)):
        current = _queue_sort(profiles[i])
        if not _same_set(canon, current):
            errs.append(invalid(f"profiles[{i}].plugins.queueSort", GoLiteral(_plugin_set_literal(current)),
                                "must be the same for all profiles"))
        for entry in profiles[i].get("pluginConfig") or []:
            if entry.get("name") == name and entry.get("args") != canon_args:
                errs.append(invalid(f"profiles[{i}].pluginConfig.args", entry.get("args"),
                                    "queueSort must be the same for all profiles"))
    return errs
