"""The HPA's pure rules, as table cases named by what they show: the replica calculation
(`hpa_replicas`), stabilization and scaling policies (`hpa_behavior`) and quantities."""

from __future__ import annotations

from typing import Any

import pytest

from controllers import hpa_behavior as behavior, hpa_replicas as calc, quantities, timestamps

NOW = 1_800_000_000.0


def pod(name: str, *, phase: str = "Running", ready: bool = True, cpu: str = "500m", started_ago: float = 3600,
        deleted: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if deleted:
        meta["deletionTimestamp"] = timestamps.format(NOW)
    return {"metadata": meta, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": phase, "startTime": timestamps.format(NOW - started_ago),
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                       "lastTransitionTime": timestamps.format(NOW - started_ago + 10)}]}}


def values(**milli: int) -> dict[str, calc.PodValue]:
    return {name: calc.PodValue(v, NOW - 5, 15) for name, v in milli.items()}


UTILIZATION = [
    # sentence, current, target %, pods, values, expected replicas
    ("double the target usage doubles the pods", 2, 50, [pod("a"), pod("b")], values(a=500, b=500), 4),
    ("usage within the tolerance keeps the count", 2, 50, [pod("a"), pod("b")], values(a=270, b=270), 2),
    ("half the usage halves the pods", 4, 50, [pod(n) for n in "abcd"], values(a=125, b=125, c=125, d=125), 2),
    ("a missing pod counts at its full request on a scale-down", 2, 50, [pod("a"), pod("b")], values(a=100), 2),
    ("a missing pod counts as idle on a scale-up", 2, 50, [pod("a"), pod("b")], values(a=500), 2),
    ("a deleted pod is ignored", 2, 50, [pod("a"), pod("b", deleted=True)], values(a=500, b=0), 2),
    ("an unready pod counts as idle on a scale-up (6, not 9)", 3, 50,
     [pod("a"), pod("b"), pod("c", ready=False, started_ago=60)], values(a=750, b=750, c=0), 6),
]


@pytest.mark.parametrize("sentence,current,target,pods,found,expected", UTILIZATION, ids=[c[0] for c in UTILIZATION])
def test_resource_utilization(sentence: str, current: int, target: int, pods: list[dict[str, Any]],
                              found: dict[str, calc.PodValue], expected: int) -> None:
    replicas, _, _ = calc.resource_utilization_replicas(current, target, pods, found, "cpu", "", NOW)
    assert replicas == expected


def test_utilization_is_usage_over_requests_in_percent() -> None:
    _, utilization, raw = calc.resource_utilization_replicas(2, 50, [pod("a"), pod("b")], values(a=250, b=150), "cpu",
                                                             "", NOW)
    assert (utilization, raw) == (40, 200)


def test_a_container_without_a_request_is_an_error() -> None:
    bare = pod("a")
    bare["spec"]["containers"][0]["resources"] = {}
    with pytest.raises(calc.CalculationError, match="missing request for cpu in container c of Pod a"):
        calc.resource_utilization_replicas(1, 50, [bare], values(a=100), "cpu", "", NOW)


def test_no_pods_is_an_error() -> None:
    with pytest.raises(calc.CalculationError, match="no pods returned by selector"):
        calc.plain_metric_replicas(1, 100, [], {}, "", NOW)


RATIO = [
    ("from zero the ratio itself is the count", 0, 2.5, [], 3),
    ("from zero a zero value stays at zero", 0, 0.0, [], 0),
    ("a ratio within the tolerance keeps the count", 3, 1.05, [pod("a")], 3),
    ("the ratio scales the ready pods, not the desired ones", 3, 2.0, [pod("a"), pod("b"), pod("c", ready=False)], 4),
    ("a zero value scales to zero", 2, 0.0, [pod("a"), pod("b")], 0),
]


@pytest.mark.parametrize("sentence,current,ratio,pods,expected", RATIO, ids=[c[0] for c in RATIO])
def test_object_and_external_values(sentence: str, current: int, ratio: float, pods: list[dict[str, Any]],
                                    expected: int) -> None:
    assert calc.usage_ratio_replicas(current, ratio, pods) == expected


PER_POD = [
    ("thirty over ten per pod is three", 1, 30_000, 10_000, (3, 30_000)),
    ("from zero the average target divides the total", 0, 25_000, 10_000, (3, 25_000)),
    ("close enough to the target keeps the count", 3, 31_000, 10_000, (3, 10_334)),
    ("zero total goes to zero", 3, 0, 10_000, (0, 0)),
]


@pytest.mark.parametrize("sentence,current,usage,target,expected", PER_POD, ids=[c[0] for c in PER_POD])
def test_average_value_targets(sentence: str, current: int, usage: int, target: int, expected: tuple[int, int]) -> None:
    assert calc.per_pod_replicas(current, usage, target) == expected


WITHOUT = [
    # sentence, history [(replicas, seconds ago)], current, desired, min, max, expected, able reason, limit reason
    ("a scale-up is capped at twice the current count (at least 4)", [], 3, 20, 1, 100, 6, "ReadyForNewScale",
     "ScaleUpLimit"),
    ("the maximum caps below the rate limit", [], 3, 20, 1, 5, 5, "ReadyForNewScale", "TooManyReplicas"),
    ("a higher recommendation within 300s holds a scale-down", [(5, 100)], 5, 2, 1, 10, 5, "ScaleDownStabilized",
     "DesiredWithinRange"),
    ("a recommendation older than 300s no longer holds it", [(5, 400)], 5, 2, 1, 10, 2, "ReadyForNewScale",
     "DesiredWithinRange"),
    ("the minimum lifts a low recommendation", [], 3, 1, 2, 10, 2, "ReadyForNewScale", "TooFewReplicas"),
]


@pytest.mark.parametrize("sentence,history,current,desired,low,high,expected,able,limit", WITHOUT,
                         ids=[c[0] for c in WITHOUT])
def test_without_behavior(sentence: str, history: list[tuple[int, float]], current: int, desired: int, low: int,
                          high: int, expected: int, able: str, limit: str) -> None:
    state = behavior.State([behavior.Recommendation(r, NOW - ago) for r, ago in history])
    outcome = behavior.without_behavior(state, current, desired, low, high, NOW)
    assert (outcome.replicas, outcome.able_to_scale[0], outcome.limit[0]) == (expected, able, limit)
    assert outcome.limited == (limit != "DesiredWithinRange")


FAST_DOWN = {"scaleDown": {"stabilizationWindowSeconds": 0}}
WITH = [
    # sentence, behavior, history, ups [(change, ago)], current, desired, expected, able, limit
    ("the default scale-up adds at most max(4 pods, 100%) per 15s", {}, [], [], 2, 20, 6, "ReadyForNewScale",
     "ScaleUpLimit"),
    ("pods already added this period count against the policy", {}, [], [(4, 5)], 6, 20, 6, "ReadyForNewScale",
     "ScaleUpLimit"),
    ("a Min select policy takes the smaller proposal",
     {"scaleUp": {"selectPolicy": "Min", "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60},
                                                     {"type": "Percent", "value": 100, "periodSeconds": 60}]}},
     [], [], 2, 20, 3, "ReadyForNewScale", "ScaleUpLimit"),
    ("a Disabled scale-up never grows", {"scaleUp": {"selectPolicy": "Disabled"}}, [], [], 2, 5, 2, "ReadyForNewScale",
     "ScaleUpLimit"),
    ("the default scale-down window holds the highest recent recommendation", {}, [(6, 60)], [], 6, 2, 6,
     "ScaleDownStabilized", "DesiredWithinRange"),
    ("a zero scale-down window scales down at once", FAST_DOWN, [(6, 60)], [], 6, 2, 2, "ReadyForNewScale",
     "DesiredWithinRange"),
    ("a Pods scale-down policy limits the step",
     {"scaleDown": {"stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}},
     [], [], 6, 2, 5, "ReadyForNewScale", "ScaleDownLimit"),
    ("a scale-up window holds the lowest recent recommendation", {"scaleUp": {"stabilizationWindowSeconds": 120}},
     [(2, 60)], [], 2, 5, 2, "ScaleUpStabilized", "DesiredWithinRange"),
    ("the minimum stops a scale-down to zero", FAST_DOWN, [], [], 3, 0, 1, "ReadyForNewScale", "TooFewReplicas"),
]


@pytest.mark.parametrize("sentence,rules,history,ups,current,desired,expected,able,limit", WITH,
                         ids=[c[0] for c in WITH])
def test_with_behavior(sentence: str, rules: dict[str, Any], history: list[tuple[int, float]],
                       ups: list[tuple[int, float]], current: int, desired: int, expected: int, able: str,
                       limit: str) -> None:
    state = behavior.State([behavior.Recommendation(r, NOW - ago) for r, ago in history],
                           [behavior.ScaleEvent(c, NOW - ago) for c, ago in ups])
    outcome = behavior.with_behavior(state, rules, current, desired, 1, 10, NOW)
    assert (outcome.replicas, outcome.able_to_scale[0], outcome.limit[0]) == (expected, able, limit)


def test_scale_to_zero_needs_min_replicas_zero() -> None:
    outcome = behavior.with_behavior(behavior.State(), FAST_DOWN, 3, 0, 0, 10, NOW)
    assert (outcome.replicas, outcome.limited) == (0, False)


QUANTITIES = [("1500m", 1500), ("2", 2000), ("1.5k", 1_500_000), ("1Ki", 1_024_000), ("100n", 1), ("1e3", 1_000_000)]


@pytest.mark.parametrize("text,milli", QUANTITIES, ids=[f"{t} is {m} milli" for t, m in QUANTITIES])
def test_quantities_read_as_milli_values(text: str, milli: int) -> None:
    assert quantities.milli(text) == milli


@pytest.mark.parametrize("milli,text", [(1500, "1500m"), (3000, "3"), (0, "0"), (2_000_000, "2k"),
                                         (1_500_000, "1500")])
def test_milli_values_print_as_decimal_si(milli: int, text: str) -> None:
    assert quantities.from_milli(milli) == text


def test_a_bad_quantity_is_refused() -> None:
    with pytest.raises(ValueError):
        quantities.milli("12 apples")


def test_a_container_resource_counts_only_the_named_containers_request() -> None:
    two = pod("a")
    two["spec"]["containers"].append({"name": "sidecar", "resources": {"requests": {"cpu": "1500m"}}})
    # 250m used by "c" against its 500m request is 50%: at a 25% target that doubles the pods.
    replicas, utilization, _ = calc.resource_utilization_replicas(1, 25, [two], values(a=250), "cpu", "c", NOW)
    assert (replicas, utilization) == (2, 50)
    with pytest.raises(calc.CalculationError, match="container web not present in pod a"):
        calc.pod_requests([two], "web", "cpu")


TOLERANCES = [
    ("the default tolerance keeps a ratio of 1.08", calc.TOLERANCE, 1.08, True),
    ("a zero scale-up tolerance acts on 1.01", calc.Tolerance(down=0.1, up=0.0), 1.01, False),
    ("a wide scale-down tolerance holds 0.7", calc.Tolerance(down=0.35, up=0.1), 0.7, True),
    ("the default tolerance acts on 0.85", calc.TOLERANCE, 0.85, False),
]


@pytest.mark.parametrize("sentence,tolerance,ratio,within", TOLERANCES, ids=[c[0] for c in TOLERANCES])
def test_tolerances_per_direction(sentence: str, tolerance: calc.Tolerance, ratio: float, within: bool) -> None:
    assert tolerance.within(ratio) is within
    assert (calc.usage_ratio_replicas(10, ratio, [pod(str(i)) for i in range(10)], tolerance) == 10) is within
