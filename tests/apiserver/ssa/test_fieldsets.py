"""FieldsV1 sets: the wire form round-trips, the set algebra, and how paths print in conflicts."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver import schemas
from apiserver.ssa import elements, fieldsets, shapes

M: dict[str, Any] = {".": {}}


def test_fields_v1_round_trips_members_with_and_without_children() -> None:
    wire = {"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:ports": {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}}}}}
    parsed = fieldsets.from_fields_v1(wire)
    assert parsed["f:data"] == {".": {}, "f:a": M}
    assert fieldsets.has(parsed, ("f:data",)) and not fieldsets.has(parsed, ("f:metadata", "f:labels"))
    assert fieldsets.to_fields_v1(parsed) == wire


def test_client_written_keys_are_canonicalized_so_equal_items_match() -> None:
    parsed = fieldsets.from_fields_v1({"f:ports": {'k:{"protocol": "TCP", "port": 80}': {}}})
    assert list(parsed["f:ports"]) == ['k:{"port":80,"protocol":"TCP"}']


SET_CASES = [
    ("difference removes a member but keeps its children",
     fieldsets.difference, {"f:a": {".": {}, "f:b": M}}, {"f:a": M}, {"f:a": {"f:b": M}}),
    ("difference of a child leaves the parent's membership",
     fieldsets.difference, {"f:a": {".": {}, "f:b": M}}, {"f:a": {"f:b": M}}, {"f:a": M}),
    ("recursive difference drops everything below a member",
     fieldsets.recursive_difference, {"f:a": {".": {}, "f:b": M}, "f:c": M}, {"f:a": M}, {"f:c": M}),
    ("intersection keeps only shared paths",
     fieldsets.intersection, {"f:a": {"f:b": M, "f:c": M}}, {"f:a": {"f:c": M, "f:d": M}}, {"f:a": {"f:c": M}}),
    ("union merges membership and children",
     fieldsets.union, {"f:a": {"f:b": M}}, {"f:a": M}, {"f:a": {"f:b": M, ".": {}}}),
]


@pytest.mark.parametrize("name,operation,a,b,want", SET_CASES, ids=[c[0] for c in SET_CASES])
def test_set_algebra(name: str, operation: Any, a: dict, b: dict, want: dict) -> None:
    assert operation(a, b) == want


def test_paths_list_this_levels_members_before_descending() -> None:
    fields = {"f:spec": {"f:replicas": M, "f:template": {"f:x": M}}, "f:data": M}
    assert list(fieldsets.paths(fields)) == [("f:data",), ("f:spec", "f:replicas"), ("f:spec", "f:template", "f:x")]


RENDER_CASES = [
    ("a field path", ("f:data", "f:a"), ".data.a"),
    ("a keyed item with two keys", ("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}', "f:name"),
     '.spec.ports[port=80,protocol="TCP"].name'),
    ("a set value", ("f:metadata", "f:finalizers", 'v:"example.com/x"'), '.metadata.finalizers[="example.com/x"]'),
    ("an index", ("f:args", "i:3"), ".args[3]"),
]


@pytest.mark.parametrize("name,path,want", RENDER_CASES, ids=[c[0] for c in RENDER_CASES])
def test_conflict_paths_print_as_structured_merge_diff_does(name: str, path: tuple, want: str) -> None:
    assert elements.render_path(path) == want


def test_named_struct_fields_become_members_but_map_entries_do_not() -> None:
    root = shapes.for_object(schemas.for_kind("apps", "v1", "Deployment"))
    fields = {"f:metadata": {"f:labels": {"f:app": M}}, "f:spec": {"f:template": {"f:spec": {"f:nodeSelector": {"f:d": M}}}}}
    ensured = fieldsets.ensure_named_fields_are_members(fields, root)
    assert ensured["f:metadata"]["f:labels"] == {".": {}, "f:app": M}
    assert ensured["f:spec"]["f:template"]["f:spec"]["f:nodeSelector"] == {".": {}, "f:d": M}
    assert "." in ensured["f:spec"] and "." in ensured["f:spec"]["f:template"]


def test_a_list_map_key_takes_its_schema_default() -> None:
    pod = shapes.for_object(schemas.for_kind("", "v1", "Pod"))
    containers = shapes.field_node(shapes.field_node(pod, "spec"), "containers")
    ports = shapes.field_node(shapes.items_node(containers), "ports")
    assert elements.item({"containerPort": 80}, 0, ports, strict=True) == 'k:{"containerPort":80,"protocol":"TCP"}'
    with pytest.raises(elements.ElementError, match='omits key field "name"'):
        elements.item({"image": "x"}, 0, containers, strict=True)
    assert elements.item({"image": "x"}, 4, containers, strict=False) == "i:4"
