"""nodes/cluster_file.py and nodes/pools.py: the default cluster, pools from a file, and errors
that name the line and the field."""

from __future__ import annotations

import pytest

from nodes import cluster_file, pools

GOOD = """\
kind: Cluster
gracePeriodScale: 0.5
pools:
- name: train
  count: 3
  cpu: "96"
  memory: 1152Gi
  labels: {team: ml}
  taints:
  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
  racks: [r1, r2, r3]
  devices:
    gpus: 8
    model: a100
    mig: {gpus: all, profiles: [1g.10gb]}
- name: web
  count: 1
"""


def test_default_cluster_is_four_nodes_in_two_racks_with_gpus_on_two() -> None:
    shapes = pools.expand(pools.default_pools())
    assert [s.name for s in shapes] == ["gpu-0", "gpu-1", "cpu-0", "cpu-1"]
    assert [s.rack for s in shapes] == ["rack-1", "rack-2", "rack-1", "rack-2"]
    assert [s.gpu_count for s in shapes] == [8, 8, 0, 0]
    assert shapes[0].devices == {"gpus": 8, "model": "h100"}
    assert [s.pod_cidr for s in shapes] == ["10.128.0.0/24", "10.128.1.0/24", "10.128.2.0/24", "10.128.3.0/24"]


@pytest.mark.parametrize("nodes, gpus, model, expected", [
    (1, 8, "h100", [8]),
    (5, 4, "l40s", [4, 4, 0, 0, 0]),
    (3, 8, "none", [0, 0, 0]),
    (2, 0, "h200", [0, 0]),
])
def test_flags_choose_how_many_nodes_carry_gpus(nodes: int, gpus: int, model: str, expected: list[int]) -> None:
    assert [s.gpu_count for s in pools.expand(pools.default_pools(nodes, gpus, model))] == expected


def test_an_unknown_gpu_model_is_refused() -> None:
    with pytest.raises(ValueError, match="--gpu-model must be one of"):
        pools.default_pools(4, 8, "v100")


def test_a_good_file_gives_its_pools_with_devices_passed_through() -> None:
    parsed = cluster_file.parse(GOOD)
    assert parsed.grace_period_scale == 0.5
    train, web = parsed.pools
    assert (train.count, train.cpu, train.memory, train.labels) == (3, "96", "1152Gi", {"team": "ml"})
    assert train.taints == ({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},)
    assert train.devices == {"gpus": 8, "model": "a100", "mig": {"gpus": "all", "profiles": ["1g.10gb"]}}
    assert [s.rack for s in pools.expand(parsed.pools)] == ["r1", "r2", "r3", "rack-1"]
    assert web.cpu == pools.CPU_INSTANCE[1]


@pytest.mark.parametrize("text, expected", [
    ("pools:\n- name: a\n  count: two\n", 'cluster.yaml:3: pools[0].count: must be a whole number ≥ 0, got "two"'),
    ("pools:\n- name: a\n  count: 1\n  cpu: lots\n",
     'cluster.yaml:4: pools[0].cpu: must be a quantity such as "16", "500m" or "64Gi", got "lots"'),
    ("pools:\n- name: a\n  count: 1\n- name: b\n  count: 1\n  taints:\n  - {key: k, effect: Sometimes}\n",
     'cluster.yaml:7: pools[1].taints[0].effect: must be one of NoSchedule, PreferNoSchedule, NoExecute, got "Sometimes"'),
    ("pools:\n- name: a\n  count: 1\n  colour: red\n", "cluster.yaml:4: pools[0].colour: unknown field"),
    ("pools:\n- count: 1\n", "cluster.yaml:2: pools[0].name: is required"),
    ("pools:\n- name: a\n  count: 1\n- name: a\n  count: 2\n",
     'cluster.yaml:4: pools[1].name: "a" is used by an earlier pool'),
    ("pools:\n- name: a\n  count: 1\n  devices: [gpu]\n", "cluster.yaml:4: pools[0].devices: must be a mapping, got a list"),
    ("pools:\n- name: a\n  count: 1\n  labels: {'bad key!': x}\n", "cluster.yaml:4: pools[0].labels.bad key!: \"bad key!\" is not a valid label key"),
    ("pools:\n- name: a\n  count: 1\n  devices:\n    gpus: 4\n    model: b300\n",
     "cluster.yaml:6: pools[0].devices.model: "),
    ("pools:\n- name: a\n  count: 1\n  devices:\n    gpus: 2\n    mig: {gpus: [0, 5]}\n",
     "cluster.yaml:6: pools[0].devices.mig.gpus[1]: "),
    ("kind: Cluster\n", "cluster.yaml:1: pools: is required"),
    ("pools:\n- name: a\n  count: 1\n  devices:\n    gpus: 8\n    model: v100\n",
     "cluster.yaml:6: pools[0].devices.model: unsupported value 'v100'"),
    ("pools:\n- name: a\n  count: 1\n  devices:\n    gpus: 2\n    colour: red\n",
     "cluster.yaml:6: pools[0].devices.colour: unknown field"),
    ("pools: [\n", "cluster.yaml:2: not valid YAML"),
    ("gracePeriodScale: fast\npools:\n- {name: a, count: 1}\n", 'cluster.yaml:1: gracePeriodScale: must be a number ≥ 0, got "fast"'),
])
def test_a_malformed_file_names_the_line_and_the_field(text: str, expected: str) -> None:
    with pytest.raises(cluster_file.ClusterFileError) as info:
        cluster_file.parse(text)
    assert str(info.value).startswith(expected)


def test_a_missing_file_names_the_path(tmp_path) -> None:
    with pytest.raises(cluster_file.ClusterFileError, match="No such file"):
        cluster_file.load(str(tmp_path / "nope.yaml"))
