"""1.36's default profile and how a file's `plugins` merge into it (upstream's v1 defaults).

`default_plugins(features)` is pkg/scheduler/apis/config/v1/default_plugins.go: one multiPoint
list with score weights, DynamicResources just before DefaultPreemption while its gate is on,
GangScheduling (and the workload placement plugins) only with theirs, each only if this build
registered it. `merge(defaults, custom)`
is mergePluginSet per point: `disabled` drops defaults (`*` drops them all), an enabled default
named again keeps its place with the new settings, new names go after. Plugin args defaults live
in `plugin_args.py`.
"""

from __future__ import annotations

from typing import Any

from scheduler.config.plugin_points import available
from scheduler.framework.interfaces import Features
from scheduler.plugins import names

Plugins = dict[str, dict[str, list[dict[str, Any]]]]  # point -> {"enabled": [...], "disabled": [...]}

# Upstream defaults of the gates this package reads, for a `features` map that leaves one out.
GATE_DEFAULTS = {
    "DynamicResourceAllocation": True, "GenericWorkload": False, "GangScheduling": False,
    "TopologyAwareWorkloadScheduling": False, "DRASchedulerFilterTimeout": True,
    "DRADeviceBindingConditions": True, "DRAResourceClaimDeviceStatus": True, "StorageCapacityScoring": False,
}


def gate(features: Features, name: str) -> bool:
    return bool(features.get(name, GATE_DEFAULTS.get(name, False)))


def default_plugins(features: Features) -> Plugins:
    enabled: list[dict[str, Any]] = [
        {"name": names.SCHEDULING_GATES},
        {"name": names.PRIORITY_SORT},
        {"name": names.NODE_UNSCHEDULABLE},
        {"name": names.NODE_NAME},
        {"name": names.TAINT_TOLERATION, "weight": 3},
        {"name": names.NODE_AFFINITY, "weight": 2},
        {"name": names.NODE_PORTS},
        {"name": names.NODE_RESOURCES_FIT, "weight": 1},
        {"name": names.VOLUME_RESTRICTIONS},
        {"name": names.NODE_VOLUME_LIMITS},
        {"name": names.VOLUME_BINDING},
        {"name": names.VOLUME_ZONE},
        {"name": names.POD_TOPOLOGY_SPREAD, "weight": 2},
        {"name": names.INTER_POD_AFFINITY, "weight": 2},
        {"name": names.DEFAULT_PREEMPTION},
        {"name": names.NODE_RESOURCES_BALANCED_ALLOCATION, "weight": 1},
        {"name": names.IMAGE_LOCALITY, "weight": 1},
        {"name": names.DEFAULT_BINDER},
    ]
    if gate(features, "DynamicResourceAllocation"):
        # Before DefaultPreemption: freeing an idle claim beats evicting a pod doing work.
        at = next(i for i, p in enumerate(enabled) if p["name"] == names.DEFAULT_PREEMPTION)
        enabled.insert(at, {"name": names.DYNAMIC_RESOURCES})
    if gate(features, "GenericWorkload") and gate(features, "GangScheduling"):
        enabled.append({"name": names.GANG_SCHEDULING})
    if gate(features, "GenericWorkload") and gate(features, "TopologyAwareWorkloadScheduling"):
        # Upstream's applyTopologyAwareWorkloadScheduling: the generator, and the pods-count placement scorer at weight 1.
        enabled += [{"name": names.TOPOLOGY_PLACEMENT}, {"name": names.POD_GROUP_PODS_COUNT, "weight": 1}]
    # Only what this build registered: upstream's default names only plugins upstream has.
    have = available()
    return {"multiPoint": {"enabled": [p for p in enabled if p["name"] in have], "disabled": []}}


def merge(defaults: Plugins, custom: Plugins | None) -> Plugins:
    if custom is None:
        return defaults
    points = dict.fromkeys([*defaults, *custom])
    return {point: _merge_set(defaults.get(point) or {}, custom.get(point) or {}) for point in points}


def _merge_set(default: dict[str, Any], custom: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    custom_enabled = [dict(p or {}) for p in custom.get("enabled") or []]
    # Both lists' disabled names are kept: multiPoint expansion reads them per point.
    disabled = [{"name": (p or {}).get("name", "")} for p in (custom.get("disabled") or [])]
    disabled += [{"name": p.get("name", "")} for p in (default.get("disabled") or [])]
    disabled_names = {p["name"] for p in disabled}
    by_name = {p.get("name", ""): i for i, p in enumerate(custom_enabled)}  # the last one wins, as in Go
    replaced: set[int] = set()
    enabled: list[dict[str, Any]] = []
    if "*" not in disabled_names:
        for plugin in default.get("enabled") or []:
            if plugin["name"] in disabled_names:
                continue
            if plugin["name"] in by_name:
                index = by_name[plugin["name"]]
                replaced.add(index)
                plugin = custom_enabled[index]
            enabled.append(dict(plugin))
    # Custom plugins that replaced nothing go last; a name listed twice stays twice, and the
    # framework's expansion reports it.
    enabled += [p for i, p in enumerate(custom_enabled) if i not in replaced]
    return {"enabled": enabled, "disabled": disabled}
