"""`load(path, features)` and `default(features)`: a KubeSchedulerConfiguration made into `SchedulerConfig`.

The steps are upstream's: strict decode (`decoding.py`), defaults (top-level fields, the single
profile's name, plugins merged into 1.36's default profile, every used plugin's args), validation
of the whole file (`validation.py`), then per profile the framework's own checks and multiPoint
expansion (`expansion.py`). Any refusal is a `ConfigError` whose text kube-scheduler would print.
`python -m scheduler --config` calls `load`; without `--config` it calls `default`.
"""

from __future__ import annotations

import copy
from typing import Any

from scheduler.config import decoding, defaults, expansion, plugin_args, validation
from scheduler.config.errors import ConfigError, forbidden
from scheduler.config.plugin_points import POINTS_OF
from scheduler.config.types import SchedulerConfig
from scheduler.framework.interfaces import Features

DEFAULT_SCHEDULER_NAME = "default-scheduler"


def load(path: str | None, features: Features) -> SchedulerConfig:
    if not path:
        return default(features)
    return build(decoding.read(path), features)


def default(features: Features) -> SchedulerConfig:
    return build({"apiVersion": decoding.VERSION, "kind": decoding.KIND}, features)


def build(doc: dict[str, Any], features: Features) -> SchedulerConfig:
    """A decoded document (apiVersion and kind already checked) to the scheduler's config."""
    doc = apply_defaults(doc, features)
    validation.validate(doc, features)
    if doc.get("extenders"):
        raise ConfigError.of([forbidden("extenders", "haru's scheduler does not call scheduler extenders")])
    profiles = [expansion.build_profile(p, features) for p in doc["profiles"]]
    return SchedulerConfig(profiles=profiles, percentage_of_nodes_to_score=doc["percentageOfNodesToScore"],
                           parallelism=doc["parallelism"],
                           pod_initial_backoff_seconds=float(doc["podInitialBackoffSeconds"]),
                           pod_max_backoff_seconds=float(doc["podMaxBackoffSeconds"]))


def apply_defaults(doc: dict[str, Any], features: Features) -> dict[str, Any]:
    """SetDefaults_KubeSchedulerConfiguration and SetDefaults_KubeSchedulerProfile, on a copy."""
    out = copy.deepcopy(doc)
    out["parallelism"] = 16 if out.get("parallelism") is None else out["parallelism"]
    profiles = [p or {} for p in out.get("profiles") or []] or [{}]
    if len(profiles) == 1 and profiles[0].get("schedulerName") is None:
        # Only a lone profile is named for the user; several must each carry a name.
        profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    out["profiles"] = [_profile_defaults(p, features) for p in profiles]
    for key, value in (("percentageOfNodesToScore", 0), ("podInitialBackoffSeconds", 1), ("podMaxBackoffSeconds", 10)):
        if out.get(key) is None:
            out[key] = value
    return out


def _profile_defaults(profile: dict[str, Any], features: Features) -> dict[str, Any]:
    profile["plugins"] = defaults.merge(defaults.default_plugins(features), profile.get("plugins"))
    configs = []
    for entry in profile.get("pluginConfig") or []:
        entry = dict(entry or {})
        entry["args"] = plugin_args.defaulted(entry.get("name") or "", entry.get("args"), features)
        configs.append(entry)
    configured = {c.get("name") for c in configs}
    used = sorted({p.get("name", "") for point in profile["plugins"].values() for p in point.get("enabled") or []})
    for name in used:
        if name not in configured and name in plugin_args.DEFAULTERS and name in POINTS_OF:
            configs.append({"name": name, "args": plugin_args.defaulted(name, None, features)})
    profile["pluginConfig"] = configs
    return profile
