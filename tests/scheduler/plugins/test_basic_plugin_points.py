"""The basic plugins as the framework finds them: registry names, and the extension points
`isinstance` discovers (a misspelt method would silently drop a plugin from a point)."""

from __future__ import annotations

import pytest

from scheduler.framework import interfaces as points
from scheduler.plugins import names
from scheduler.registry import REGISTRY
from tests.scheduler import fakes

EXPECTED = [
    (names.NODE_NAME, {points.FilterPlugin, points.EnqueueExtensions}),
    (names.NODE_UNSCHEDULABLE, {points.FilterPlugin, points.EnqueueExtensions}),
    (names.TAINT_TOLERATION, {points.FilterPlugin, points.PreScorePlugin, points.ScorePlugin, points.ScoreExtensions,
                              points.EnqueueExtensions}),
    (names.NODE_AFFINITY, {points.PreFilterPlugin, points.FilterPlugin, points.PreScorePlugin, points.ScorePlugin,
                           points.ScoreExtensions, points.EnqueueExtensions}),
    (names.NODE_RESOURCES_FIT, {points.PreFilterPlugin, points.FilterPlugin, points.PreScorePlugin, points.ScorePlugin,
                                points.EnqueueExtensions}),
    (names.NODE_RESOURCES_BALANCED_ALLOCATION, {points.PreScorePlugin, points.ScorePlugin}),
    (names.NODE_PORTS, {points.PreFilterPlugin, points.FilterPlugin, points.EnqueueExtensions}),
    (names.IMAGE_LOCALITY, {points.ScorePlugin}),
]
ALL_POINTS = [points.PreEnqueuePlugin, points.QueueSortPlugin, points.EnqueueExtensions, points.PreFilterPlugin,
              points.PreFilterExtensions, points.FilterPlugin, points.PostFilterPlugin, points.PreScorePlugin,
              points.ScorePlugin, points.ScoreExtensions, points.ReservePlugin, points.PermitPlugin,
              points.PreBindPlugin, points.BindPlugin, points.PostBindPlugin]


@pytest.mark.parametrize("name, implemented", EXPECTED, ids=[e[0] for e in EXPECTED])
def test_the_registry_builds_the_plugin_with_default_args_at_its_upstream_points(name: str, implemented: set) -> None:
    plugin = REGISTRY[name]({}, fakes.FakeHandle(), {})
    assert plugin.name == name
    assert {p for p in ALL_POINTS if isinstance(plugin, p)} == implemented
