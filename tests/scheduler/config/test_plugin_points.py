"""`plugin_points.POINTS_OF` against the plugins themselves: the table multiPoint expansion trusts
must say exactly which extension points each registered plugin class implements.

A plugin not yet in `scheduler/registry.py` is skipped (it arrives from another branch); once it
is registered, a row that disagrees with the class fails here.
"""

from __future__ import annotations

import pytest

from scheduler import config, registry
from scheduler.config.plugin_points import POINTS_OF
from scheduler.framework import interfaces as fw
from scheduler.framework import pod_group
from tests.scheduler.fakes import FakeHandle

PROTOCOLS = {
    "preEnqueue": fw.PreEnqueuePlugin, "queueSort": fw.QueueSortPlugin, "preFilter": fw.PreFilterPlugin,
    "filter": fw.FilterPlugin, "postFilter": fw.PostFilterPlugin, "preScore": fw.PreScorePlugin,
    "score": fw.ScorePlugin, "reserve": fw.ReservePlugin, "permit": fw.PermitPlugin, "preBind": fw.PreBindPlugin,
    "bind": fw.BindPlugin, "postBind": fw.PostBindPlugin,
    "placementGenerate": pod_group.PlacementGeneratePlugin, "placementScore": pod_group.PlacementScorePlugin,
}
FEATURES = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}


@pytest.mark.parametrize("name", sorted(POINTS_OF))
def test_each_registered_plugin_implements_exactly_its_row(name: str) -> None:
    if name not in registry.REGISTRY:
        pytest.skip(f"haru has no {name} plugin yet")
    args = config.default(FEATURES).profiles[0].plugin_args.get(name, {})
    plugin = registry.REGISTRY[name](args, FakeHandle(), FEATURES)
    implemented = {point for point, proto in PROTOCOLS.items() if isinstance(plugin, proto)}
    assert implemented == set(POINTS_OF[name])
    assert plugin.name == name
