"""`status.typeChecking` warnings: unknown fields of the matched kinds, at cel-go's positions."""

from __future__ import annotations

from typing import Any

from admission.policy import compiled, type_checking
from tests.admission.fakes import FakeView


def _policy(validations: list[dict[str, Any]], resources: list[str], groups: list[str] | None = None) -> Any:
    return compiled.compile_validating({"metadata": {"name": "p"}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": groups or ["apps"], "apiVersions": ["v1"],
                                                "operations": ["CREATE"], "resources": resources}]},
        "validations": validations}})


def test_an_unknown_field_is_reported_per_kind_at_its_position():
    policy = _policy([{"expression": "object.spec.replicass > 1"}], ["deployments"])
    assert type_checking.check(policy, FakeView()) == [{
        "fieldRef": "spec.validations[0].expression",
        "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n"
                   " | object.spec.replicass > 1\n | ...........^\n"}]


def test_fields_inside_macros_are_checked_against_the_list_items():
    policy = _policy([{"expression": "object.spec.containers.all(c, c.imagee != '')",
                       "messageExpression": "'name: ' + object.metadata.nam"}], ["pods"], groups=[""])
    warnings = type_checking.check(policy, FakeView())
    assert [w["fieldRef"] for w in warnings] == ["spec.validations[0].expression",
                                                "spec.validations[0].messageExpression"]
    assert "/v1, Kind=Pod: ERROR: <input>:1:32: undefined field 'imagee'" in warnings[0]["warning"]
    assert "undefined field 'nam'" in warnings[1]["warning"]


def test_known_fields_maps_and_wildcard_rules_give_no_warning():
    clean = _policy([{"expression": "has(object.spec.replicas) && object.metadata.labels.anything == 'x'"}],
                    ["deployments"])
    assert type_checking.check(clean, FakeView()) == []
    wildcard = _policy([{"expression": "object.nonsense == 1"}], ["*"])
    assert type_checking.check(wildcard, FakeView()) == []
