"""Table tests for the pure parts: schema validation, structural checks, CRD validation, defaults,
pruning, JSONPath, printer cells, naming verdicts and CEL rule walking."""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from typing import Any

import pytest

from apiserver import field_validation, registry
from apiserver.crds import (
    cel_rules, crd_validation, defaulting, definition, jsonpath, naming, printing, schema_validation,
)
from tests.apiserver.crds import widget as w

INT = {"type": "integer"}
STR = {"type": "string"}


@pytest.mark.parametrize("value, schema, expected", [
    pytest.param("x", INT, ['f: Invalid value: "x": f in body must be of type integer: "string"'], id="wrong type"),
    pytest.param(None, STR, ['f: Invalid value: null: f in body must be of type string: "null"'], id="null not nullable"),
    pytest.param(None, {**STR, "nullable": True}, [], id="null allowed when nullable"),
    pytest.param(1.0, INT, [], id="an integral float is an integer"),
    pytest.param(7, {"x-kubernetes-int-or-string": True}, [], id="int-or-string takes an int"),
    pytest.param(True, {"x-kubernetes-int-or-string": True},
                 ['f: Invalid value: true: f in body must be of type integer,string: "boolean"'], id="int-or-string"),
    pytest.param("c", {**STR, "enum": ["a", "b"]}, ['f: Unsupported value: "c": supported values: "a", "b"'], id="enum"),
    pytest.param("ab1", {**STR, "pattern": "^[a-z]+$"}, ["f: Invalid value: \"ab1\": f in body should match '^[a-z]+$'"],
                 id="pattern"),
    pytest.param("a", {**STR, "minLength": 2}, ['f: Invalid value: "a": f in body should be at least 2 chars long'],
                 id="minLength"),
    pytest.param("abc", {**STR, "maxLength": 2}, ["f: Too long: may not be more than 2 bytes"], id="maxLength"),
    pytest.param(11, {**INT, "maximum": 10}, ["f: Invalid value: 11: f in body should be less than or equal to 10"],
                 id="maximum"),
    pytest.param(0, {**INT, "minimum": 0, "exclusiveMinimum": True},
                 ["f: Invalid value: 0: f in body should be greater than 0"], id="exclusiveMinimum"),
    pytest.param([1, 2, 3], {"type": "array", "items": INT, "maxItems": 2},
                 ["f: Too many: 3: must have at most 2 items"], id="maxItems"),
    pytest.param([], {"type": "array", "items": INT, "minItems": 1},
                 ["f: Invalid value: []: f in body should have at least 1 items"], id="minItems"),
    pytest.param({"a": 1, "b": 2}, {"type": "object", "additionalProperties": INT, "maxProperties": 1},
                 ["f: Too many: 2: must have at most 1 items"], id="maxProperties"),
    pytest.param({}, {"type": "object", "required": ["a"], "properties": {"a": INT}}, ["f.a: Required value"],
                 id="required"),
    pytest.param("2024-13-01", {**STR, "format": "date"},
                 ['f: Invalid value: "2024-13-01": f in body must be of type date: "2024-13-01"'], id="date format"),
    pytest.param("10.0.0.1", {**STR, "format": "ipv4"}, [], id="ipv4 format"),
    pytest.param([{"k": "a"}, {"k": "a"}], {"type": "array", "x-kubernetes-list-type": "map",
                                          "x-kubernetes-list-map-keys": ["k"],
                                          "items": {"type": "object", "properties": {"k": STR}}},
                 ['f[1]: Duplicate value: {"k":"a"}'], id="list-map duplicate keys"),
    pytest.param({"kind": "Pod"}, {"type": "object", "x-kubernetes-embedded-resource": True,
                                   "x-kubernetes-preserve-unknown-fields": True},
                 ["f.apiVersion: Required value: must not be empty"], id="embedded resource needs apiVersion"),
])
def test_schema_validation_messages(value: Any, schema: dict[str, Any], expected: list[str]) -> None:
    causes = schema_validation.validate(value, schema, "f")
    assert [f"{c['field']}: {c['message']}" for c in causes] == expected


def _crd(**changes: Any) -> dict[str, Any]:
    crd = w.crd()
    for path, value in changes.items():
        node: Any = crd
        parts = path.split("__")
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node[part]
        last = parts[-1]
        if value is None:
            del node[int(last) if last.isdigit() else last]
        else:
            node[int(last) if last.isdigit() else last] = value
    return crd


SCHEMA = "spec.versions[0].schema.openAPIV3Schema"


@pytest.mark.parametrize("crd, expected", [
    pytest.param(w.crd(), [], id="the test CRD is valid"),
    pytest.param(_crd(metadata__name="widgets.other.com"),
                 ['metadata.name: Invalid value: "widgets.other.com": must be spec.names.plural+"."+spec.group'],
                 id="name must be plural.group"),
    pytest.param(_crd(spec__versions__1__storage=True),
                 ["spec.versions: must have exactly one version marked as storage version"], id="two storage versions"),
    pytest.param(_crd(spec__scope="Global"),
                 ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'], id="scope"),
    pytest.param(_crd(spec__versions__0__schema=None, spec__versions__0__selectableFields=None),
                 [f"{SCHEMA}: Required value: schemas are required"], id="schema required"),
    pytest.param(_crd(spec__versions__0__schema={"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"properties": {"a": {"type": "string"}}}}}}, spec__versions__0__selectableFields=None),
        [f"{SCHEMA}.properties[spec].type: Required value: must not be empty for specified object fields"],
        id="non-structural: property without a type"),
    pytest.param(_crd(spec__versions__0__schema={"openAPIV3Schema": {"type": "object", "properties": {
        "list": {"type": "array"}}}}, spec__versions__0__selectableFields=None),
        [f"{SCHEMA}.properties[list].items: Required value: must be specified"], id="array without items"),
    pytest.param(_crd(spec__names__kind="Bad_Kind"),
                 ['spec.names.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: '],
                 id="kind must be a DNS-1035 label in mixed case"),
])
def test_crd_validation(crd: dict[str, Any], expected: list[str]) -> None:
    causes = crd_validation.validate(crd)
    rendered = [f"{c['field']}: {c['message']}" for c in causes]
    assert len(rendered) == len(expected), rendered
    for got, want in zip(rendered, expected):
        if want.startswith("spec.versions: "):
            assert got.startswith("spec.versions: Invalid value: [") and got.endswith(want.split(": ", 1)[1])
        else:
            assert got.startswith(want)


def test_crd_rule_that_does_not_compile_is_refused() -> None:
    crd = w.crd()
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = [{"rule": "self.a +"}]
    causes = crd_validation.validate(crd)
    assert causes[0]["field"] == f"{SCHEMA}.x-kubernetes-validations[0].rule"
    assert "compilation failed: ERROR: <input>:1:9: Syntax error" in causes[0]["message"]


def test_defaults_fill_absent_and_null_fields_recursively() -> None:
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "default": {}, "properties": {
            "a": {"type": "integer", "default": 1}, "b": {"type": "string", "default": "x", "nullable": True},
            "items": {"type": "array", "items": {"type": "object", "properties": {"p": {"type": "integer", "default": 80}}}},
        }}}}
    obj: dict[str, Any] = {}
    assert defaulting.apply(obj, schema)
    assert obj == {"spec": {"a": 1, "b": "x"}}
    obj = {"spec": {"a": None, "b": None, "items": [{}]}}
    defaulting.apply(obj, schema)
    assert obj == {"spec": {"a": 1, "b": None, "items": [{"p": 80}]}}
    assert not defaulting.apply(obj, schema)


def test_pruning_drops_undeclared_fields_and_keeps_preserved_ones() -> None:
    schema = definition.row_schema(w.crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    obj = w.widget("p", bogus=1, extra={"anything": {"deep": 1}}, template={"apiVersion": "v1", "kind": "Pod",
                                                                            "spec": {"x": 1}})
    obj["metadata"]["bogusMeta"] = 1
    obj["status"] = {"replicas": 1, "nope": 2}
    unknown = field_validation.prune(obj, schema)
    assert sorted(unknown) == ["metadata.bogusMeta", "spec.bogus", "status.nope"]
    assert obj["spec"]["extra"] == {"anything": {"deep": 1}} and obj["spec"]["template"]["spec"] == {"x": 1}


@pytest.mark.parametrize("path, expected", [
    (".spec.replicas", [3]),
    (".status.conditions[?(@.type==\"Ready\")].status", ["True"]),
    (".spec.ports[*].name", ["a", "b"]),
    (".spec.ports[-1].port", [2]),
    ("{.metadata.labels['app.kubernetes.io/name']}", ["w"]),
    (".spec.missing", []),
])
def test_jsonpath_subset(path: str, expected: list[Any]) -> None:
    obj = {"metadata": {"labels": {"app.kubernetes.io/name": "w"}},
           "spec": {"replicas": 3, "ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]},
           "status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]}}
    assert jsonpath.find(obj, path) == expected


def test_printer_cells_follow_the_column_types() -> None:
    columns = ({"name": "R", "type": "integer", "jsonPath": ".spec.r"}, {"name": "S", "type": "string", "jsonPath": ".spec.s"},
               {"name": "B", "type": "boolean", "jsonPath": ".spec.b"}, {"name": "Age", "type": "date",
                                                                        "jsonPath": ".metadata.creationTimestamp"},
               {"name": "None", "type": "string", "jsonPath": ".spec.none"})
    printer = printing.build(columns)
    now = datetime(2026, 1, 1, 0, 5, tzinfo=timezone.utc)
    obj = {"metadata": {"name": "n", "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"r": 2.0, "s": {"k": 1}, "b": True}}
    assert printer.cells(obj, now) == ["n", 2, '{"k":1}', True, "5m", None]
    assert printing.build(()).columns[1].name == "Age"


def test_naming_conflicts_name_the_first_clash() -> None:
    first = w.crd()
    first["status"] = {"acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                         "listKind": "WidgetList", "shortNames": ["wd"]}}
    second = copy.deepcopy(w.crd())
    second["spec"]["names"] = {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "shortNames": ["wd"]}
    verdict = naming.check(second, [first], registry.Registry())
    assert verdict == naming.Verdict(False, "ShortNamesConflict", '"wd" is already in use')
    second["spec"]["names"]["shortNames"] = ["gz"]
    assert naming.check(second, [first], registry.Registry()).accepted
    status: dict[str, Any] = {}
    naming.apply(status, second, naming.Verdict(True, "NoConflicts", "no conflicts found"), "T1")
    again = copy.deepcopy(status)
    naming.apply(again, second, naming.Verdict(True, "NoConflicts", "no conflicts found"), "T2")
    assert again == status  # unchanged conditions keep their transition time: no status write loops


def test_transition_rules_run_only_with_an_old_value() -> None:
    node = {"type": "object", "properties": {"v": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.v >= oldSelf.v", "message": "v may not decrease",
                                          "reason": "FieldValueForbidden", "fieldPath": ".v"}]}
    assert cel_rules.validate({"v": 1}, node, path="spec") == []
    causes = cel_rules.validate({"v": 1}, node, {"v": 2}, path="spec")
    assert causes == [{"reason": "FieldValueForbidden", "message": "Forbidden: v may not decrease", "field": "spec.v"}]


def test_list_map_items_correlate_with_their_old_selves_by_key() -> None:
    items = {"type": "object", "properties": {"name": STR, "size": INT},
             "x-kubernetes-validations": [{"rule": "self.size >= oldSelf.size"}]}
    node = {"type": "array", "items": items, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}
    old = [{"name": "a", "size": 5}, {"name": "b", "size": 5}]
    new = [{"name": "b", "size": 6}, {"name": "a", "size": 4}, {"name": "c", "size": 1}]
    causes = cel_rules.validate(new, node, old, path="spec.disks")
    assert [(c["field"], c["message"]) for c in causes] == [
        ("spec.disks[1]", 'Invalid value: "object": failed rule: self.size >= oldSelf.size')]
