"""The PodGroup cycle's two points in a KubeSchedulerConfiguration (KEP-5732): the default profile
under TopologyAwareWorkloadScheduling, explicit placementGenerate / placementScore lists with their
own weights, and upstream's "does not extend" error for a plugin at a placement point it lacks."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from scheduler import config
from scheduler.config import ConfigError
from scheduler.config.types import SchedulerConfig

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
TAS = {"GenericWorkload": True, "GangScheduling": True, "TopologyAwareWorkloadScheduling": True}
PREFIX = "couldn't create scheduler: initializing profiles: creating profile for scheduler name default-scheduler: "


def load(tmp_path: Path, body: str) -> SchedulerConfig:
    path = tmp_path / "config.yaml"
    path.write_text(HEAD + textwrap.dedent(body))
    return config.load(str(path), TAS)


def points(cfg: SchedulerConfig, point: str) -> list[tuple[str, int]]:
    return [(r.name, r.weight) for r in cfg.profiles[0].plugins(point)]


def test_the_gate_adds_the_generator_and_the_pods_count_scorer_to_the_default_profile() -> None:
    on = config.default(TAS)
    assert points(on, "placementGenerate") == [("TopologyPlacementGenerator", 0)]
    assert points(on, "placementScore") == [("NodeResourcesFit", 1), ("PodGroupPodsCount", 1)]
    off = config.default({"GenericWorkload": True})
    assert points(off, "placementGenerate") == []
    assert "PodGroupPodsCount" not in off.profiles[0].names()


def test_a_placement_scorer_weight_set_at_its_point_wins_over_multipoint(tmp_path: Path) -> None:
    cfg = load(tmp_path, """
        profiles:
        - plugins:
            placementScore:
              enabled:
              - name: PodGroupPodsCount
                weight: 5
        """)
    assert points(cfg, "placementScore") == [("PodGroupPodsCount", 5), ("NodeResourcesFit", 1)]
    assert ("NodeResourcesFit", 1) in points(cfg, "score")  # its node-score weight is its own


def test_placement_scoring_can_be_turned_off_alone(tmp_path: Path) -> None:
    cfg = load(tmp_path, """
        profiles:
        - plugins:
            placementScore:
              disabled:
              - name: '*'
        """)
    assert points(cfg, "placementScore") == []
    assert points(cfg, "placementGenerate") == [("TopologyPlacementGenerator", 0)]


@pytest.mark.parametrize("point, plugin, interface", [
    ("placementGenerate", "PodGroupPodsCount", "PlacementGeneratePlugin"),
    ("placementScore", "TopologyPlacementGenerator", "PlacementScorePlugin"),
    ("filter", "TopologyPlacementGenerator", "FilterPlugin"),
])
def test_a_plugin_at_a_placement_point_it_lacks_is_refused(tmp_path: Path, point: str, plugin: str,
                                                           interface: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, f"""
            profiles:
            - plugins:
                {point}:
                  enabled:
                  - name: {plugin}
            """)
    assert str(caught.value) == PREFIX + f'plugin "{plugin}" does not extend {interface} plugin'
