"""The create fast path (`ssa/created.py`) writes exactly the FieldsV1 the general updater gives a creator.

Each case runs both: `Engine.update` from an empty object with no managers (the general compare
walk) and `created.added_fields`, for every kind the registry conformance test creates and for the
shapes that make compare subtle: Go zero fields, nulls, empty maps and lists, atomic and set lists,
keyed lists with repeated or key-less items, schema-less custom resources.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from apiserver import schemas
from apiserver.ssa import apply as ssa_apply
from apiserver.ssa import created, fieldsets, managers
from tests.registry.test_conformance import SPECS

WRITER = managers.Identity("w", "Update", "", "")

POD_CASES: list[dict[str, Any]] = [
    {"spec": {}},
    {"spec": {"containers": None, "volumes": []}},
    {"spec": {"containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80}, {"containerPort": 80},
                                                                      {"containerPort": 81, "protocol": "UDP"}],
                              "env": [{"name": "E", "value": ""}, {"value": "no name"}],
                              "resources": {}, "securityContext": {"capabilities": {"add": ["A", "A"]}}}],
              "nodeSelector": {}, "tolerations": [{"key": "k", "operator": "Exists"}],
              "hostNetwork": False, "priority": 0, "dnsConfig": {"options": [{"name": "n"}]}}},
    {"metadata": {"labels": {}, "annotations": {"a": ""}, "finalizers": ["x", "x"],
                  "ownerReferences": [{"uid": "u1", "name": "o", "kind": "K", "apiVersion": "v1"}]},
     "spec": {"containers": [{"name": "a"}, {"name": "a", "image": "second"}]}, "status": {"phase": "Pending"}},
]

CR_SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "atomic": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "object"}},
        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "keyed": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                  "items": {"type": "object", "properties": {"id": {"type": "string"}}}},
        "frozen": {"type": "object", "x-kubernetes-map-type": "atomic"},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}
CR_CASES: list[dict[str, Any]] = [
    {"spec": {"atomic": [{"a": 1}], "set": ["b", "a", "b"], "keyed": [{"id": "1", "v": 1}, {"id": "1"}, {"v": 2}],
              "frozen": {"x": {"y": 1}}, "free": {"deep": {"er": [1, {"z": None}]}, "empty": {}}}},
    {"spec": {"atomic": [], "set": [], "keyed": [], "frozen": {}, "free": None}, "extra": {"n": [[], {}]}},
]


def both(schema: Any, obj: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the general walk's FieldsV1 for a creator, the fast path's)."""
    engine = ssa_apply.engine_for(schema, "", [{}, obj])
    general = engine.update({}, copy.deepcopy(obj), {}, WRITER, "v1")
    slow = fieldsets.difference(general[WRITER].fields, ssa_apply.STRIPPED) if WRITER in general else {}
    fast = created.fields_v1(copy.deepcopy(obj), engine.node, ssa_apply.STRIPPED, engine.ignored,
                             go_zeros=engine.zero_of is not None)
    return fieldsets.to_fields_v1(slow), fast


def _json_text(fields: dict[str, Any]) -> str:
    return json.dumps(fields)  # key order matters: FieldsV1 is stored and shown in this order


def _object(group: str, resource: str, body: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    from apiserver import registry
    info = next(r for r in registry.Registry.builtin().all() if (r.group, r.resource) == (group, resource))
    obj = {"apiVersion": f"{group + '/' if group else ''}{info.version}", "kind": info.kind,
           "metadata": {"name": "n", "namespace": "ns", "uid": "u", "labels": {"app": "x"}}, **copy.deepcopy(body)}
    return info.schema, obj


@pytest.mark.parametrize("group,resource", sorted(SPECS))
def test_every_conformance_kind_gets_the_same_fields(group: str, resource: str) -> None:
    schema, obj = _object(group, resource, SPECS[(group, resource)])
    slow, fast = both(schema, obj)
    assert slow, "the general walk owns something for every created object"
    assert _json_text(fast) == _json_text(slow)


@pytest.mark.parametrize("body", POD_CASES)
def test_pods_with_zero_fields_nulls_and_repeated_items(body: dict[str, Any]) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", **copy.deepcopy(body)}
    pod.setdefault("metadata", {})["name"] = "p"
    slow, fast = both(schemas.for_kind("", "v1", "Pod"), pod)
    assert _json_text(fast) == _json_text(slow)


@pytest.mark.parametrize("schema", [CR_SCHEMA, None], ids=["structural", "no-schema"])
@pytest.mark.parametrize("body", CR_CASES)
def test_custom_resources_with_every_list_and_map_kind(schema: Any, body: dict[str, Any]) -> None:
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, **copy.deepcopy(body)}
    slow, fast = both(schema, obj)
    assert _json_text(fast) == _json_text(slow)
