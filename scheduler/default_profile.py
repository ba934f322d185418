"""The configuration the scheduler starts with: `--config` through `scheduler.config`, or a default.

`load_config(path, features)` is the one place `python -m scheduler` and the supervisor's embedded
start get a `SchedulerConfig` from. When `scheduler.config.load` exists (the KubeSchedulerConfiguration
reader) it decides; until then this module builds 1.36's default profile, upstream's MultiPoint
list (default_plugins.go) reduced to the plugins the registry has, with the same weights. Every
plugin is listed at every point: the framework keeps it only at the points it implements, as
MultiPoint does.
"""

from __future__ import annotations

from collections.abc import Mapping

import scheduler.config as config_package
from scheduler.config.types import POINTS, PluginRef, Profile, SchedulerConfig
from scheduler.plugins import names
from scheduler.registry import REGISTRY

# Upstream's MultiPoint order and weights (kube-scheduler 1.36 default_plugins.go).
DEFAULT_PLUGINS: tuple[tuple[str, int], ...] = (
    (names.SCHEDULING_GATES, 0), (names.PRIORITY_SORT, 0), (names.NODE_UNSCHEDULABLE, 0), (names.NODE_NAME, 0),
    (names.TAINT_TOLERATION, 3), (names.NODE_AFFINITY, 2), (names.NODE_PORTS, 0), (names.NODE_RESOURCES_FIT, 1),
    (names.VOLUME_RESTRICTIONS, 0), (names.NODE_VOLUME_LIMITS, 0), (names.VOLUME_BINDING, 0), (names.VOLUME_ZONE, 0),
    (names.POD_TOPOLOGY_SPREAD, 2), (names.INTER_POD_AFFINITY, 2), (names.DYNAMIC_RESOURCES, 0),
    (names.DEFAULT_PREEMPTION, 0), (names.NODE_RESOURCES_BALANCED_ALLOCATION, 1), (names.IMAGE_LOCALITY, 1),
    (names.DEFAULT_BINDER, 0),
)


def default_config(features: Mapping[str, bool], scheduler_name: str = "default-scheduler") -> SchedulerConfig:
    refs = [PluginRef(name, weight) for name, weight in DEFAULT_PLUGINS if name in REGISTRY]
    profile = Profile(scheduler_name=scheduler_name, points={point: list(refs) for point in POINTS})
    return SchedulerConfig(profiles=[profile])


def load_config(path: str | None, features: Mapping[str, bool], scheduler_name: str | None = None) -> SchedulerConfig:
    """The file at `path` (or the defaults); `scheduler_name` renames the first profile (--scheduler-name)."""
    load = getattr(config_package, "load", None)
    if load is not None:
        config: SchedulerConfig = load(path, features)
    elif path is not None:
        raise ValueError("--config needs the KubeSchedulerConfiguration reader (scheduler.config.load), "
                         "which this build does not have")
    else:
        config = default_config(features)
    if scheduler_name:
        config.profiles[0].scheduler_name = scheduler_name
    return config
