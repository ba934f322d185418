"""go_shape: the JSON Go's encoder writes for a built-in object, checked case by case.

Each case is a decoded object before and the object Go would encode after (omitempty drops,
pointer zero values, structs kept as `{}`, Go field order, sorted map keys). The orders are the
Go types' declaration orders (kubernetes/api v0.36.3 types.go), not the protobuf numbers.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from apiserver import go_shape

CASES: list[tuple[str, str, str, dict[str, Any], dict[str, Any]]] = [
    ("an empty annotations map and an empty labels map are dropped from ObjectMeta",
     "v1", "ConfigMap",
     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "annotations": {}, "labels": {}}},
     {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}}),
    ("empty strings, zero numbers and false under omitempty go; a zero without omitempty stays",
     "v1", "Pod",
     {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "generateName": ""},
      "spec": {"containers": [{"name": "c", "image": "", "tty": False,
                               "ports": [{"containerPort": 0, "hostPort": 0, "name": ""}]}],
               "hostNetwork": False, "nodeName": ""}},
     {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"},
      "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 0}]}]}}),
    ("pointer fields keep their zero values (replicas 0, hostUsers false, an empty runtimeClassName)",
     "apps/v1", "Deployment",
     {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "d"},
      "spec": {"replicas": 0, "paused": False, "revisionHistoryLimit": 0,
               "template": {"spec": {"hostUsers": False, "runtimeClassName": "", "containers": []}}}},
     {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "d"},
      "spec": {"replicas": 0, "template": {"spec": {"containers": [], "runtimeClassName": "", "hostUsers": False}},
               "revisionHistoryLimit": 0}}),
    ("non-pointer structs under omitempty are kept as {} (Namespace spec and status, emptyDir)",
     "v1", "Namespace",
     {"metadata": {"name": "ns"}, "status": {}, "spec": {}, "apiVersion": "v1", "kind": "Namespace"},
     {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "ns"}, "spec": {}, "status": {}}),
    ("a null creationTimestamp (omitzero) and a null pointer are dropped",
     "apps/v1", "Deployment",
     {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "d", "creationTimestamp": None},
      "spec": {"replicas": None, "template": {"metadata": {"creationTimestamp": None}, "spec": {"containers": []}}}},
     {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "d"},
      "spec": {"template": {"metadata": {}, "spec": {"containers": []}}}}),
    ("PodSpec and Container fields come out in Go order, not protobuf-number order",
     "v1", "Pod",
     {"spec": {"nodeName": "n1", "containers": [{"tty": True, "env": [{"value": "1", "name": "A"}],
                                                 "envFrom": [{"prefix": "P_"}], "name": "c"}],
               "initContainers": [{"name": "i"}], "volumes": [{"emptyDir": {}, "name": "v"}]},
      "metadata": {"uid": "u", "name": "p", "resourceVersion": "5", "namespace": "ns"},
      "apiVersion": "v1", "kind": "Pod"},
     {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "ns", "uid": "u", "resourceVersion": "5"},
      "spec": {"volumes": [{"name": "v", "emptyDir": {}}], "initContainers": [{"name": "i"}],
               "containers": [{"name": "c", "envFrom": [{"prefix": "P_"}], "env": [{"name": "A", "value": "1"}],
                               "tty": True}],
               "nodeName": "n1"}}),
    ("map keys are sorted (labels, data, resource lists), and a map's values keep their own order",
     "v1", "ConfigMap",
     {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "labels": {"z": "1", "a": "2"}},
      "data": {"b.json": '{"z":1,"a":2}', "a.txt": "x"}},
     {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "labels": {"a": "2", "z": "1"}},
      "data": {"a.txt": "x", "b.json": '{"z":1,"a":2}'}}),
    ("embedded JSON (RawExtension) and managedFields (only haru's encoder writes them) are left as written",
     "apps/v1", "ControllerRevision",
     {"kind": "ControllerRevision", "apiVersion": "apps/v1",
      "metadata": {"name": "r", "managedFields": [{"manager": "m", "operation": "Update",
                                                   "fieldsV1": {"f:z": {}, "f:a": {}}}]},
      "revision": 1, "data": {"z": {}, "a": "", "labels": {}}},
     {"kind": "ControllerRevision", "apiVersion": "apps/v1",
      "metadata": {"name": "r", "managedFields": [{"manager": "m", "operation": "Update",
                                                   "fieldsV1": {"f:z": {}, "f:a": {}}}]},
      "data": {"z": {}, "a": "", "labels": {}}, "revision": 1}),
    ("inline structs (Volume's VolumeSource, Probe's handler) sit where Go embeds them",
     "v1", "Pod",
     {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"},
      "spec": {"containers": [{"name": "c", "livenessProbe": {"periodSeconds": 3, "httpGet": {"port": 80, "path": ""}}}]}},
     {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"},
      "spec": {"containers": [{"name": "c", "livenessProbe": {"httpGet": {"port": 80}, "periodSeconds": 3}}]}}),
    ("a CRD's schema is walked through its recursive properties",
     "apiextensions.k8s.io/v1", "CustomResourceDefinition",
     {"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1", "metadata": {"name": "x"},
      "spec": {"group": "g", "names": {"plural": "xs", "kind": "X"}, "scope": "Namespaced",
               "versions": [{"name": "v1", "served": True, "storage": True,
                             "schema": {"openAPIV3Schema": {"type": "object", "description": "",
                                                            "properties": {"spec": {"type": "object", "required": [],
                                                                                    "properties": {}}}}}}]}},
     {"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1", "metadata": {"name": "x"},
      "spec": {"group": "g", "names": {"plural": "xs", "kind": "X"}, "scope": "Namespaced",
               "versions": [{"name": "v1", "served": True, "storage": True,
                             "schema": {"openAPIV3Schema": {"type": "object",
                                                            "properties": {"spec": {"type": "object"}}}}}]}}),
]


@pytest.mark.parametrize("api_version, kind, before, after", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_shape_gives_the_go_encoding(api_version: str, kind: str, before: dict[str, Any], after: dict[str, Any]) -> None:
    plan = go_shape.plan_for(api_version, kind)
    assert plan is not None
    go_shape.shape(before, plan)
    # Compare bytes: key order is half of what is checked.
    assert msgspec.json.encode(before) == msgspec.json.encode(after)


def test_shaping_twice_changes_nothing() -> None:
    plan = go_shape.plan_for("v1", "Pod")
    assert plan is not None
    obj = {"spec": {"containers": [{"image": "x", "name": "c"}]}, "metadata": {"labels": {"b": "", "a": ""}}}
    go_shape.shape(obj, plan)
    once = msgspec.json.encode(obj)
    go_shape.shape(obj, plan)
    assert msgspec.json.encode(obj) == once == b'{"metadata":{"labels":{"a":"","b":""}},"spec":{"containers":[{"name":"c","image":"x"}]}}'


def test_fields_go_does_not_know_are_kept_after_the_known_ones() -> None:
    plan = go_shape.plan_for("v1", "ConfigMap")
    assert plan is not None
    obj = {"extra": {}, "data": {"a": "1"}, "kind": "ConfigMap"}
    go_shape.shape(obj, plan)
    assert list(obj) == ["kind", "data", "extra"] and obj["extra"] == {}


def test_kinds_without_a_protobuf_message_have_no_plan() -> None:
    assert go_shape.plan_for("meta.k8s.io/v1", "Table") is None
    assert go_shape.plan_for("example.com/v1", "Widget") is None


def test_go_order_table_agrees_with_the_protobuf_table() -> None:
    """Every reordered message exists, and its Go order is a permutation of its field numbers."""
    compiler = go_shape._compiler()
    for name, numbers in compiler.order.items():
        assert sorted(numbers) == sorted(compiler.messages[name].fields), name


def test_shape_top_fixes_the_first_two_levels_only() -> None:
    """What strategies and in-tree admission add after the whole pass: metadata, spec, status."""
    plan = go_shape.plan_for("v1", "Pod")
    assert plan is not None
    obj = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "annotations": {"z": "1", "a": "2"}, "uid": "u"},
           "spec": {"containers": [{"image": "x", "name": "c"}], "nodeName": "n", "priority": 0, "hostname": ""},
           "status": {}}
    go_shape.shape_top(obj, plan)
    assert msgspec.json.encode(obj) == (
        b'{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","uid":"u","annotations":{"a":"2","z":"1"}},'
        b'"spec":{"containers":[{"image":"x","name":"c"}],"nodeName":"n","priority":0},"status":{}}')


def test_fill_writes_what_go_writes_for_fields_nobody_set() -> None:
    """Non-pointer structs become `{}` (with their own such fields), scalars without omitempty
    their zero; pointers, slices, maps and Time stay absent (Go: omitted or null)."""
    plan = go_shape.plan_for("apps/v1", "Deployment")
    assert plan is not None
    obj = {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "d"},
           "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"spec": {"containers": [{"name": "c"}]}}}}
    go_shape.shape(obj, plan, fill=True)
    assert msgspec.json.encode(obj) == (
        b'{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":'
        b'{"a":"b"}},"template":{"metadata":{},"spec":{"containers":[{"name":"c","resources":{}}]}},'
        b'"strategy":{}},"status":{}}')
    crd_plan = go_shape.plan_for("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert crd_plan is not None
    crd = {"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1", "metadata": {"name": "x"},
           "spec": {"group": "g", "names": {"kind": "X", "plural": "xs"}, "scope": "Namespaced", "versions": []}}
    go_shape.shape(crd, crd_plan, fill=True)
    assert crd["status"] == {"acceptedNames": {"plural": "", "kind": ""}}
    assert list(crd["spec"]["names"]) == ["plural", "kind"]
