"""`scheduler.config.load`: tables of good files and what they become, and bad files and the exact refusal.

Each case is a KubeSchedulerConfiguration as a person would write it (YAML unless it says JSON),
written to a temp file and read through `load`, so decoding, defaults, validation and expansion
all run. Bad files must fail with kube-scheduler's text and the field path it names. Every
in-tree plugin counts as registered here (plugins arrive from other branches); one test takes
one away to check that an unregistered plugin is left out of the default and unknown to files.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from scheduler import config, registry
from scheduler.config import ConfigError
from scheduler.config.plugin_points import POINTS_OF
from scheduler.config.types import SchedulerConfig

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
ALL_ON = {"GenericWorkload": True, "GangScheduling": True}


def load_text(tmp_path: Path, body: str, features: dict[str, bool] | None = None, *, head: bool = True,
              suffix: str = ".yaml") -> SchedulerConfig:
    path = tmp_path / f"config{suffix}"
    path.write_text((HEAD if head else "") + textwrap.dedent(body))
    return config.load(str(path), features or {})


def points(cfg: SchedulerConfig, point: str, profile: int = 0) -> list[tuple[str, int]]:
    return [(r.name, r.weight) for r in cfg.profiles[profile].plugins(point)]


@pytest.fixture(autouse=True)
def every_plugin_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in POINTS_OF:
        if name not in registry.REGISTRY:
            monkeypatch.setitem(registry.REGISTRY, name, lambda args, handle, features: None)


def test_a_plugin_this_build_lacks_is_not_in_the_default_and_unknown_to_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(registry.REGISTRY, "VolumeZone")
    assert "VolumeZone" not in config.default({}).profiles[0].names()
    with pytest.raises(ConfigError) as caught:
        load_text(tmp_path, "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: VolumeZone\n")
    assert str(caught.value).endswith('FilterPlugin "VolumeZone" does not exist')


DEFAULT_SCORE = [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
                 ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 1),
                 ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)]


def test_no_file_is_the_136_default_profile() -> None:
    cfg = config.load(None, {})
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler"]
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (16, 0)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1.0, 10.0)
    assert points(cfg, "score") == DEFAULT_SCORE
    assert points(cfg, "queueSort") == [("PrioritySort", 0)]
    assert points(cfg, "bind") == [("DefaultBinder", 0)]
    assert points(cfg, "postFilter") == [("DynamicResources", 0), ("DefaultPreemption", 0)]
    assert points(cfg, "preEnqueue") == [("SchedulingGates", 0), ("DynamicResources", 0), ("DefaultPreemption", 0)]
    assert [n for n, _ in points(cfg, "filter")] == [
        "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
        "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
        "InterPodAffinity", "DynamicResources"]


def test_gated_plugins_follow_their_gates() -> None:
    off = config.default({"DynamicResourceAllocation": False})
    assert "DynamicResources" not in off.profiles[0].names()
    assert "GangScheduling" not in off.profiles[0].names()
    on = config.default(ALL_ON)
    assert points(on, "permit") == [("GangScheduling", 0)]
    assert "GangScheduling" in [n for n, _ in points(on, "preEnqueue")]


def test_default_plugin_args_are_upstreams_v1_defaults() -> None:
    args = config.default({}).profiles[0].plugin_args
    assert args["NodeResourcesFit"]["scoringStrategy"] == {
        "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
    assert args["DefaultPreemption"] == {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}
    assert args["InterPodAffinity"]["hardPodAffinityWeight"] == 1
    assert args["PodTopologySpread"]["defaultingType"] == "System"
    assert args["VolumeBinding"] == {"bindTimeoutSeconds": 600}
    assert args["DynamicResources"] == {"filterTimeout": "10s", "bindingTimeout": "10m0s"}
    gates_off = config.default({"DRASchedulerFilterTimeout": False, "DRADeviceBindingConditions": False})
    assert gates_off.profiles[0].plugin_args["DynamicResources"] == {}


GOOD = [
    pytest.param(
        """
        profiles:
        - schedulerName: default-scheduler
          plugins:
            score:
              enabled:
              - name: NodeResourcesFit
                weight: 5
              - name: ImageLocality
                weight: 0
        """,
        lambda c: points(c, "score") == [("NodeResourcesFit", 5), ("ImageLocality", 1)] + [
            e for e in DEFAULT_SCORE if e[0] not in ("NodeResourcesFit", "ImageLocality")],
        id="a score entry overrides the multiPoint weight and comes first; weight 0 means 1"),
    pytest.param(
        """
        profiles:
        - plugins:
            score:
              disabled:
              - name: "*"
              enabled:
              - name: NodeResourcesFit
                weight: 2
        """,
        lambda c: points(c, "score") == [("NodeResourcesFit", 2)] and c.profiles[0].scheduler_name == "default-scheduler",
        id="star disables every default score plugin and the lone profile gets the default name"),
    pytest.param(
        """
        profiles:
        - plugins:
            multiPoint:
              disabled:
              - name: NodeResourcesBalancedAllocation
              - name: ImageLocality
            filter:
              disabled:
              - name: NodePorts
        """,
        lambda c: "NodePorts" not in [n for n, _ in points(c, "filter")]
        and "NodePorts" in [n for n, _ in points(c, "preFilter")]
        and [n for n, _ in points(c, "score")][-1] == "DynamicResources",
        id="a plugin disabled at one point keeps its other points"),
    pytest.param(
        """
        profiles:
        - schedulerName: default-scheduler
        - schedulerName: bin-packer
          percentageOfNodesToScore: 30
          pluginConfig:
          - name: NodeResourcesFit
            args:
              scoringStrategy:
                type: MostAllocated
                resources:
                - name: cpu
                - name: nvidia.com/gpu
                  weight: 3
        percentageOfNodesToScore: 50
        parallelism: 4
        podInitialBackoffSeconds: 2
        podMaxBackoffSeconds: 20
        """,
        lambda c: [p.scheduler_name for p in c.profiles] == ["default-scheduler", "bin-packer"]
        and c.profile("bin-packer").plugin_args["NodeResourcesFit"]["scoringStrategy"] == {
            "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "nvidia.com/gpu", "weight": 3}]}
        and c.profile("bin-packer").percentage_of_nodes_to_score == 30
        and c.profile("default-scheduler").percentage_of_nodes_to_score is None
        and (c.percentage_of_nodes_to_score, c.parallelism) == (50, 4)
        and (c.pod_initial_backoff_seconds, c.pod_max_backoff_seconds) == (2.0, 20.0),
        id="two profiles, one bin-packing with MostAllocated and its own percentage"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: NodeResourcesFit
            args:
              scoringStrategy:
                type: RequestedToCapacityRatio
                requestedToCapacityRatio:
                  shape:
                  - {utilization: 0, score: 0}
                  - {utilization: 100, score: 10}
          - name: PodTopologySpread
            args:
              defaultingType: List
              defaultConstraints:
              - maxSkew: 1
                topologyKey: topology.kubernetes.io/zone
                whenUnsatisfiable: ScheduleAnyway
          - name: DynamicResources
            args:
              filterTimeout: 0s
              bindingTimeout: 2m
          - name: DefaultPreemption
            args:
              minCandidateNodesPercentage: 0
              minCandidateNodesAbsolute: 5
        """,
        lambda c: c.profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]["requestedToCapacityRatio"]["shape"][1]
        == {"utilization": 100, "score": 10}
        and c.profiles[0].plugin_args["PodTopologySpread"]["defaultConstraints"][0]["maxSkew"] == 1
        and c.profiles[0].plugin_args["DynamicResources"] == {"filterTimeout": "0s", "bindingTimeout": "2m"}
        and c.profiles[0].plugin_args["DefaultPreemption"] == {"minCandidateNodesPercentage": 0,
                                                                "minCandidateNodesAbsolute": 5},
        id="plugin args are kept and only their gaps are defaulted"),
    pytest.param(
        """
        profiles:
        - plugins:
            multiPoint:
              enabled:
              - name: ImageLocality
                weight: 7
        """,
        lambda c: points(c, "score")[-1] == ("ImageLocality", 7) and len(points(c, "score")) == len(DEFAULT_SCORE),
        id="a default named again in multiPoint keeps its place with the new weight"),
    pytest.param(
        """
        profiles:
        - plugins:
            queueSort:
              enabled:
              - name: PrioritySort
            filter:
              enabled:
              - name: NodeName
        """,
        lambda c: points(c, "queueSort") == [("PrioritySort", 0)] and [n for n, _ in points(c, "filter")][0] == "NodeName"
        and [n for n, _ in points(c, "filter")].count("NodeName") == 1,
        id="a default named at its own point is an override, not a double registration"),
]


@pytest.mark.parametrize("body, check", GOOD)
def test_good_files(tmp_path: Path, body: str, check) -> None:  # type: ignore[no-untyped-def]
    assert check(load_text(tmp_path, body))


def test_json_files_are_read_too(tmp_path: Path) -> None:
    body = ('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",'
            ' "profiles": [{"schedulerName": "json-one"}]}')
    cfg = load_text(tmp_path, body, head=False, suffix=".json")
    assert [p.scheduler_name for p in cfg.profiles] == ["json-one"]


P = "couldn't create scheduler: "
BAD = [
    pytest.param(
        """
        profiles:
        - schedulerName: a
        - schedulerName: a
        """,
        'profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName',
        id="two profiles with one schedulerName"),
    pytest.param(
        """
        profiles:
        - schedulerName: a
        - {}
        """,
        'profiles[1].schedulerName: Required value',
        id="a second profile without a name"),
    pytest.param(
        """
        profiles:
        - schedulerName: a
        - schedulerName: b
          plugins:
            queueSort:
              enabled:
              - name: MySort
              disabled:
              - name: "*"
        """,
        'profiles[1].plugins.queueSort: Invalid value: config.PluginSet{Enabled:[]config.Plugin{config.Plugin'
        '{Name:"MySort", Weight:0}}, Disabled:[]config.Plugin{config.Plugin{Name:"*", Weight:0}}}: '
        'must be the same for all profiles',
        id="a queueSort that differs between profiles"),
    pytest.param(
        """
        profiles:
        - plugins:
            filter:
              enabled:
              - name: NoSuchPlugin
        """,
        'initializing profiles: creating profile for scheduler name default-scheduler: '
        'FilterPlugin "NoSuchPlugin" does not exist',
        id="an unknown plugin name at one point"),
    pytest.param(
        """
        profiles:
        - plugins:
            multiPoint:
              enabled:
              - name: Coscheduling
        """,
        'initializing profiles: creating profile for scheduler name default-scheduler: '
        'PreFilterPlugin "Coscheduling" does not exist',
        id="an unknown plugin name in multiPoint"),
    pytest.param(
        """
        profiles:
        - plugins:
            score:
              enabled:
              - name: PrioritySort
        """,
        'initializing profiles: creating profile for scheduler name default-scheduler: '
        'plugin "PrioritySort" does not extend ScorePlugin plugin',
        id="a plugin at a point it does not implement"),
    pytest.param(
        """
        profiles:
        - plugins:
            filter:
              enabled:
              - name: NodeName
              - name: NodeName
        """,
        'initializing profiles: creating profile for scheduler name default-scheduler: '
        'plugin "NodeName" already registered as "FilterPlugin"',
        id="one plugin twice at one point"),
    pytest.param(
        """
        profiles:
        - plugins:
            bind:
              disabled:
              - name: "*"
            multiPoint:
              disabled:
              - name: DefaultBinder
        """,
        'initializing profiles: creating profile for scheduler name default-scheduler: '
        'at least one bind plugin is needed for profile with scheduler name "default-scheduler"',
        id="no bind plugin left"),
    pytest.param(
        """
        profiles:
        - plugins:
            queueSort:
              disabled:
              - name: "*"
        """,
        'initializing profiles: creating profile for scheduler name default-scheduler: '
        'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0',
        id="no queue sort plugin left"),
    pytest.param(
        """
        profiles:
        - plugins:
            score:
              enabled:
              - name: NodeResourcesFit
              - name: ImageLocality
                weight: 3000000000
        """,
        'json: cannot unmarshal number 3000000000 into Go struct field Plugin.profiles.plugins.score.enabled.weight '
        'of type int32',
        id="a score weight beyond int32"),
    pytest.param(
        """
        profiles:
        - plugins:
            score:
              enabled:
              - name: NodeResourcesFit
              - name: ImageLocality
                weight: "3"
        """,
        'json: cannot unmarshal string into Go struct field Plugin.profiles.plugins.score.enabled.weight of type int32',
        id="a score weight written as a string"),
    pytest.param(
        """
        profiles:
        - plugins:
            score:
              enabledd:
              - name: NodeResourcesFit
          schedulerNam: x
        parallelizm: 3
        """,
        'strict decoding error: unknown field "parallelizm", unknown field "profiles[0].plugins.score.enabledd", '
        'unknown field "profiles[0].schedulerNam"',
        id="unknown fields under strict decoding"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: DefaultPreemption
            args:
              minCandidateNodesPercent: 5
        """,
        'decoding .profiles[0].pluginConfig[0]: strict decoding error: unknown field "minCandidateNodesPercent"',
        id="an unknown field inside plugin args"),
    pytest.param(
        """
        profiles:
        - schedulerName: a: b
        """,
        'yaml: line 5: mapping values are not allowed in this context',
        id="a YAML syntax error with its line"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: DefaultPreemption
            args:
              minCandidateNodesPercentage: 0
              minCandidateNodesAbsolute: 0
        """,
        '[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same '
        'time as minCandidateNodesAbsolute, profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: '
        '0: cannot be zero at the same time as minCandidateNodesPercentage]',
        id="preemption args both zero"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: DefaultPreemption
            args:
              apiVersion: kubescheduler.config.k8s.io/v1
              kind: InterPodAffinityArgs
              hardPodAffinityWeight: 2
        """,
        'decoding .profiles[0].pluginConfig[0]: args for plugin DefaultPreemption were not of type '
        'DefaultPreemptionArgs.kubescheduler.config.k8s.io, got InterPodAffinityArgs.kubescheduler.config.k8s.io',
        id="args of another plugin's kind"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: InterPodAffinity
            args:
              hardPodAffinityWeight: 101
        """,
        'profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]',
        id="hardPodAffinityWeight above 100"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: NodeResourcesFit
            args:
              scoringStrategy:
                type: Spread
        """,
        'initializing profiles: creating profile for scheduler name default-scheduler: initializing plugin '
        '"NodeResourcesFit": scoringStrategy.type: Unsupported value: "Spread": supported values: "LeastAllocated", '
        '"MostAllocated", "RequestedToCapacityRatio"',
        id="an unknown scoring strategy is refused by the plugin, without a profile path"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: NodeResourcesFit
            args:
              scoringStrategy:
                type: RequestedToCapacityRatio
                resources:
                - name: cpu
                  weight: 101
        """,
        'initializing profiles: creating profile for scheduler name default-scheduler: initializing plugin '
        '"NodeResourcesFit": [scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in '
        'valid range (0, 100], scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type '
        'is RequestedToCapacityRatio]',
        id="RequestedToCapacityRatio without a shape and a resource weight too high"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: NodeResourcesBalancedAllocation
            args:
              resources:
              - name: cpu
                weight: 2
              - name: cpu
        """,
        '[profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1, '
        'profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: "cpu"]',
        id="balanced allocation with a weight other than 1 and a repeated resource"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: PodTopologySpread
            args:
              defaultConstraints:
              - maxSkew: 0
                topologyKey: zone
                whenUnsatisfiable: Sometimes
        """,
        '[profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": when .defaultConstraints are not '
        'empty, profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range '
        '(0, inf), profiles[0].pluginConfig[0].args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: '
        '"Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"]',
        id="spread defaults with System defaulting and a bad constraint"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: NodeAffinity
            args:
              addedAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                  - matchExpressions:
                    - key: zone
                      operator: In
                    - key: gpu
                      operator: Has
        """,
        '[profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.'
        'nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string{}: for \'in\', \'notin\' operators, '
        'values set can\'t be empty, profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnored'
        'DuringExecution.nodeSelectorTerms[0].matchExpressions[1].operator: Unsupported value: "Has": supported '
        'values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]',
        id="added node affinity with an empty In and an unknown operator"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: VolumeBinding
            args:
              bindTimeoutSeconds: -1
        """,
        'profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should '
        'not be a negative value',
        id="a negative volume bind timeout"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: DynamicResources
            args:
              bindingTimeout: 500ms
              filterTimeout: -1s
        """,
        '[profiles[0].pluginConfig[0].args.filterTimeout: Invalid value: -1s: must be zero or positive, '
        'profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: 500ms: must be at least 1 second]',
        id="DRA timeouts out of range"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: DynamicResources
            args:
              filterTimeout: soon
        """,
        'decoding .profiles[0].pluginConfig[0]: time: invalid duration "soon"',
        id="a DRA timeout that is not a duration"),
    pytest.param(
        """
        profiles:
        - pluginConfig:
          - name: DefaultPreemption
          - name: DefaultPreemption
        """,
        'profiles[0].pluginConfig[1]: Duplicate value: "DefaultPreemption"',
        id="pluginConfig names one plugin twice"),
    pytest.param(
        """
        profiles:
        - plugins:
            filter:
              enabled:
              - name: EBSLimits
        """,
        'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")',
        id="a plugin removed from v1"),
    pytest.param(
        """
        parallelism: 0
        percentageOfNodesToScore: 101
        podInitialBackoffSeconds: 5
        podMaxBackoffSeconds: 2
        """,
        '[parallelism: Invalid value: 0: should be an integer value greater than zero, percentageOfNodesToScore: '
        'Invalid value: 101: not in valid range [0-100], podMaxBackoffSeconds: Invalid value: 2: must be greater than '
        'or equal to PodInitialBackoffSeconds]',
        id="top-level numbers out of range, all reported at once"),
    pytest.param(
        """
        profiles:
        - percentageOfNodesToScore: -1
        """,
        'profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]',
        id="a profile percentage below zero"),
]


@pytest.mark.parametrize("body, message", BAD)
def test_bad_files(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_text(tmp_path, body)
    assert str(caught.value) == P + message


WRONG_HEAD = [
    pytest.param("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
                 'no kind "KubeSchedulerConfiguration" is registered for version "kubescheduler.config.k8s.io/v1beta3" '
                 'in scheme "pkg/scheduler/apis/config/scheme/scheme.go:31"', id="a removed version"),
    pytest.param("apiVersion: kubescheduler.config.k8s.io/v1\nkind: SchedulerPolicy\n",
                 'no kind "SchedulerPolicy" is registered for version "kubescheduler.config.k8s.io/v1" '
                 'in scheme "pkg/scheduler/apis/config/scheme/scheme.go:31"', id="a wrong kind"),
    pytest.param("apiVersion: kubescheduler.config.k8s.io/v1\nprofiles: []\n",
                 '''Object 'Kind' is missing in '{"apiVersion":"kubescheduler.config.k8s.io/v1","profiles":[]}\'''',
                 id="no kind"),
]


@pytest.mark.parametrize("text, message", WRONG_HEAD)
def test_the_type_header_must_name_v1(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_text(tmp_path, text, head=False)
    assert str(caught.value) == P + message


def test_a_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        config.load(str(tmp_path / "nope.yaml"), {})
    assert str(caught.value) == P + f"open {tmp_path / 'nope.yaml'}: no such file or directory"
