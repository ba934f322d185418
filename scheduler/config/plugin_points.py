"""Which extension points each in-tree plugin implements, as upstream's plugin types do.

kube-scheduler expands `multiPoint` by asking each plugin object which interfaces it satisfies;
the config is read before any plugin exists, so the answer for the in-tree plugins is written
down here (one row per `plugins/names.py` entry). `expansion.py` uses it for multiPoint and for
"does not extend" errors; `tests/scheduler/config/test_plugin_points.py` checks each row against
the registered class once the plugin is on main. `available()` is the part of the table this
build can run: a plugin haru has not registered is as unknown to a config file as upstream's
unknown names are, and the default profile leaves it out.
"""

from __future__ import annotations

from scheduler import registry
from scheduler.plugins import names

POINTS_OF: dict[str, tuple[str, ...]] = {
    names.SCHEDULING_GATES: ("preEnqueue",),
    names.PRIORITY_SORT: ("queueSort",),
    names.NODE_UNSCHEDULABLE: ("filter",),
    names.NODE_NAME: ("filter",),
    names.TAINT_TOLERATION: ("filter", "preScore", "score"),
    names.NODE_AFFINITY: ("preFilter", "filter", "preScore", "score"),
    names.NODE_PORTS: ("preFilter", "filter"),
    # placementScore: 1.36's Fit also scores a PodGroup's placements (MostAllocated, KEP-5732).
    names.NODE_RESOURCES_FIT: ("preFilter", "filter", "preScore", "score", "placementScore"),
    names.VOLUME_RESTRICTIONS: ("preFilter", "filter"),
    names.NODE_VOLUME_LIMITS: ("preFilter", "filter"),
    # Upstream's also scores, for StorageCapacityScoring (alpha, off); haru's does not.
    names.VOLUME_BINDING: ("preFilter", "filter", "reserve", "preBind"),
    names.VOLUME_ZONE: ("preFilter", "filter"),
    names.POD_TOPOLOGY_SPREAD: ("preFilter", "filter", "preScore", "score"),
    names.INTER_POD_AFFINITY: ("preFilter", "filter", "preScore", "score"),
    names.DYNAMIC_RESOURCES: ("preEnqueue", "preFilter", "filter", "postFilter", "score", "reserve", "preBind"),
    # PreEnqueue holds a pod while its own async preemption is still deleting victims.
    names.DEFAULT_PREEMPTION: ("preEnqueue", "postFilter"),
    names.NODE_RESOURCES_BALANCED_ALLOCATION: ("preScore", "score"),
    names.IMAGE_LOCALITY: ("score",),
    names.DEFAULT_BINDER: ("bind",),
    names.GANG_SCHEDULING: ("preEnqueue", "reserve", "permit"),
    names.TOPOLOGY_PLACEMENT: ("placementGenerate",),
    names.POD_GROUP_PODS_COUNT: ("placementScore",),
}

# Upstream's framework interface names, quoted in its errors ("FilterPlugin \"X\" does not exist").
INTERFACE = {
    "preEnqueue": "PreEnqueuePlugin", "queueSort": "QueueSortPlugin", "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin", "postFilter": "PostFilterPlugin", "preScore": "PreScorePlugin",
    "score": "ScorePlugin", "reserve": "ReservePlugin", "permit": "PermitPlugin", "preBind": "PreBindPlugin",
    "bind": "BindPlugin", "postBind": "PostBindPlugin",
    "placementGenerate": "PlacementGeneratePlugin", "placementScore": "PlacementScorePlugin",
}

# The order upstream's getExtensionPoints walks them, which decides which error comes first.
WALK_ORDER = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind",
              "postBind", "permit", "preEnqueue", "queueSort", "placementGenerate", "placementScore")


def available() -> set[str]:
    """In-tree plugins this build has: in the table and in `scheduler/registry.py`."""
    return {name for name in POINTS_OF if name in registry.REGISTRY}
