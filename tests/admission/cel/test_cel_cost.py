"""Cost limits: static estimates, the per-call limit with its real text, the shared budget."""

from __future__ import annotations

import time

import pytest

from admission import cel
from admission.cel import cost, environment

ENV = cel.Environment({"object": cel.DYN})
NESTED = "object.items.all(a, object.items.all(b, object.items.all(c, a + b + c >= 0)))"


def test_a_constant_rule_has_a_small_exact_estimate():
    assert ENV.compile("1 + 2 == 3").cost_estimate == cel.CostEstimate(min=2, max=2)


def test_a_field_rule_costs_one_per_selection():
    estimate = ENV.compile("object.spec.replicas > 1").cost_estimate
    assert estimate == cel.CostEstimate(min=4, max=4)


def test_a_comprehension_over_unbounded_data_has_an_unbounded_static_maximum():
    estimate = ENV.compile("object.items.all(x, x > 0)").cost_estimate
    assert estimate.min < 10
    assert estimate.max > cel.PER_CALL_LIMIT


def test_an_authorizer_check_is_expensive():
    env = cel.Environment({"authorizer": cel.AUTHORIZER})
    estimate = env.compile("authorizer.path('/x').check('get').allowed()").cost_estimate
    assert estimate.max >= 350_000


def test_a_runaway_expression_is_refused_with_the_kubernetes_text_before_it_runs():
    program = ENV.compile(NESTED)
    started = time.perf_counter()
    with pytest.raises(cel.CostLimitExceeded) as raised:
        program.evaluate({"object": {"items": list(range(200))}})  # 8 million iterations
    assert raised.value.message == "operation cancelled: actual cost limit exceeded"
    assert time.perf_counter() - started < 1.0


def test_the_same_expression_on_small_data_is_evaluated():
    assert ENV.compile(NESTED).evaluate({"object": {"items": list(range(5))}}) is True


def test_string_work_counts_the_real_lengths():
    program = ENV.compile("object.names.all(n, n.contains('x'))")
    assert program.evaluate({"object": {"names": ["ax"] * 10}}) is True
    with pytest.raises(cel.CostLimitExceeded):
        program.evaluate({"object": {"names": ["a" * 100_000] * 200}})


def test_a_lower_per_call_limit_is_honoured():
    env = cel.Environment({"object": cel.DYN}, per_call_limit=100)
    program = env.compile("object.items.all(x, x > 0)")
    assert program.evaluate({"object": {"items": [1] * 10}}) is True
    with pytest.raises(cel.CostLimitExceeded):
        program.evaluate({"object": {"items": [1] * 1000}})


def test_rules_sharing_a_budget_stop_with_the_budget_text():
    program = ENV.compile("object.items.all(x, x > 0)")
    data = {"object": {"items": [1] * 100}}
    budget = cel.CostBudget(remaining=1000)
    with pytest.raises(cel.CostBudgetExhausted) as raised:
        for _ in range(10):
            program.evaluate(data, budget=budget)
    assert raised.value.message == (
        "validation failed due to running out of cost budget, no further validation rules will be run")


def test_the_default_budget_is_kubernetes_runtime_budget():
    assert cel.CostBudget().remaining == cel.RUNTIME_CEL_COST_BUDGET == 10_000_000
    assert cel.PER_CALL_LIMIT == 1_000_000


@pytest.mark.parametrize(("text", "value"), [
    ("object.items.all(x, x > 0)", {"items": [1] * 50}),
    ("object.names.all(n, n.contains('x'))", {"names": ["ax" * 20] * 30}),
    ("object.names.exists(n, n.matches('^a+$'))", {"names": ["a" * 40, "b"]}),
    (NESTED, {"items": list(range(12))}),
    ("object.m.all(k, object.m[k].size() > 0)", {"m": {str(i): "v" * i for i in range(1, 30)}}),
    ("'app' in object.labels && object.labels['app'].startsWith('w')", {"labels": {"app": "web", "x": "y" * 300}}),
])
def test_the_rough_bound_from_the_data_size_never_undercuts_the_walked_bound(text: str, value: dict) -> None:
    program = ENV.compile(text)
    assert program._bound is not None
    data = {"object": value}
    exact = program._bound(data, cost.SATURATED)
    size = environment.data_size(program.reads.project(data))
    assert cost.sized_bound(program._bound, frozenset(ENV.variables), 1 << size.bit_length()) >= exact


def test_rough_charges_are_made_exact_before_the_budget_is_called_exhausted() -> None:
    program = ENV.compile("object.items.all(x, x > 0)")
    data = {"object": {"items": [1] * 100}}
    exact = program._bound(data, cost.SATURATED)
    rough, _ = program._charge(data, environment.data_size(program.reads.project(data)))
    assert rough > exact  # the cheap charge is rough here, so the budget below needs the exact one
    budget = cel.CostBudget(remaining=exact * 10)
    activation = ENV.activation(data)
    for _ in range(10):
        assert program.evaluate(activation, budget=budget) is True
    assert budget.remaining == 0
    with pytest.raises(cel.CostBudgetExhausted):
        program.evaluate(activation, budget=budget)


@pytest.mark.parametrize(("text", "value"), [
    ('"model" in object.attributes["gpu.nvidia.com"]', True),
    ('"model" in object.attributes["absent.example.com"]', False),
    ('object.attributes["gpu.nvidia.com"]["model"] == "H100"', True),
])
def test_a_key_lookup_in_an_indexed_map_costs_what_cel_go_charges_not_the_largest_request(text: str,
                                                                                          value: bool) -> None:
    # A DRA selector shape: cel-go charges `in` on a map 1, and an index into known data is known data.
    data = {"attributes": {"gpu.nvidia.com": {"model": "H100"}, "absent.example.com": {}}}
    assert ENV.compile(text).evaluate({"object": data}) is value
