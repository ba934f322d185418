"""ssa.apply: merging, pruning, ownership and conflicts, step by step as managers take turns."""

from __future__ import annotations

import copy
import json
from typing import Any

import msgspec
import pytest

from apiserver import errors, managed_fields, schemas
from apiserver.ssa import apply as ssa

CONFIGMAP = schemas.for_kind("", "v1", "ConfigMap")
DEPLOYMENT = schemas.for_kind("apps", "v1", "Deployment")
M: dict[str, Any] = {".": {}}


def cm(data: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d", **meta}}
    if data is not None:
        obj["data"] = data
    return obj


def run(live: dict | None, config: dict, manager: str, force: bool = False, schema: Any = CONFIGMAP,
        api_version: str = "v1") -> dict[str, Any]:
    result = ssa.apply(live, config, manager, force=force, schema=schema, api_version=api_version)
    result["metadata"].setdefault("uid", "u-1")  # as the create path would have set it
    return result


def owners(obj: dict[str, Any]) -> dict[str, Any]:
    return {f'{m["manager"]}/{m["operation"]}': m["fieldsV1"] for m in obj["metadata"].get("managedFields", [])}


def update(old: dict, change: Any, manager: str, schema: Any = CONFIGMAP) -> dict[str, Any]:
    new = copy.deepcopy(old)
    change(new)
    managed_fields.on_update(old, new, manager, schema)
    return new


# --- one manager ------------------------------------------------------------------------------

def test_apply_on_create_owns_exactly_the_configuration() -> None:
    obj = run(None, cm({"a": "1"}, labels={"app": "x"}), "a")
    assert obj["data"] == {"a": "1"}
    assert owners(obj) == {"a/Apply": {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}}
    entry = obj["metadata"]["managedFields"][0]
    assert entry["apiVersion"] == "v1" and entry["fieldsType"] == "FieldsV1" and entry["time"].endswith("Z")


def test_a_field_the_manager_stops_applying_is_removed() -> None:
    obj = run(None, cm({"a": "1", "b": "2"}, labels={"app": "x", "tier": "t"}), "a")
    obj = run(obj, cm({"a": "changed"}, labels={"app": "x"}), "a")
    assert obj["data"] == {"a": "changed"} and obj["metadata"]["labels"] == {"app": "x"}
    assert owners(obj)["a/Apply"] == {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}


def test_dropping_every_entry_removes_the_whole_map() -> None:
    obj = run(None, cm({"a": "1"}), "a")
    obj = run(obj, cm(), "a")
    assert "data" not in obj and "managedFields" not in obj["metadata"]


def test_identity_and_server_metadata_are_never_owned_and_survive_pruning() -> None:
    live = run(None, cm({"a": "1"}, labels={"x": "1"}), "a")
    live["metadata"].update(uid="u-9", resourceVersion="7", creationTimestamp="2026-01-01T00:00:00Z")
    obj = run(live, cm({"a": "1"}), "a")
    assert obj["metadata"]["uid"] == "u-9" and obj["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert "labels" not in obj["metadata"]
    assert "f:metadata" not in owners(obj)["a/Apply"]


def test_applying_the_same_configuration_changes_nothing_not_even_the_entry_time() -> None:
    live = run(None, cm({"a": "1"}), "a")
    live["metadata"]["managedFields"][0]["time"] = "2020-01-01T00:00:00Z"
    again = run(live, cm({"a": "1"}), "a")
    assert again["metadata"]["managedFields"][0]["time"] == "2020-01-01T00:00:00Z"
    # Byte for byte, key order included: the store then sees a no-op and keeps the resourceVersion.
    assert msgspec.json.encode(again) == msgspec.json.encode(live)


def test_an_applied_null_unsets_the_field_and_is_still_owned() -> None:
    live = run(None, cm({"a": "1", "b": "2"}), "a")
    obj = run(live, cm({"a": "1", "b": None}), "a")
    assert obj["data"] == {"a": "1"}
    assert owners(obj)["a/Apply"] == {"f:data": {"f:a": {}, "f:b": {}}}


def test_managed_fields_in_the_configuration_are_rejected() -> None:
    config = cm({"a": "1"})
    config["metadata"]["managedFields"] = [{"manager": "x"}]
    with pytest.raises(errors.APIError) as info:
        run(None, config, "a")
    assert info.value.code == 400 and info.value.message == "metadata.managedFields must be nil"


# --- several managers -------------------------------------------------------------------------

def test_a_different_value_for_another_appliers_field_is_a_conflict_with_one_cause() -> None:
    live = run(None, cm({"a": "1"}), "first")
    with pytest.raises(ssa.ConflictError) as info:
        run(live, cm({"a": "2"}), "second")
    status = info.value.status()
    assert status["code"] == 409 and status["reason"] == "Conflict"
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "first": .data.a'
    assert status["details"] == {"causes": [
        {"type": "FieldManagerConflict", "message": 'conflict with "first"', "field": ".data.a"}]}


def test_several_conflicts_are_listed_per_manager_with_update_managers_api_version() -> None:
    live = run(None, cm({"a": "1", "b": "1"}, labels={"l": "1"}), "first")
    live = update(live, lambda o: o["data"].update(b="2"), "kubectl-edit")
    with pytest.raises(ssa.ConflictError) as info:
        run(live, cm({"a": "9", "b": "9"}, labels={"l": "9"}), "second")
    assert info.value.message == (
        'Apply failed with 3 conflicts: conflicts with "first":\n- .data.a\n- .metadata.labels.l\n'
        'conflicts with "kubectl-edit" using v1:\n- .data.b')
    assert [c["field"] for c in info.value.details["causes"]] == [".data.a", ".metadata.labels.l", ".data.b"]


def test_an_applied_empty_map_is_owned_as_a_leaf() -> None:
    assert owners(run(None, cm({}), "a")) == {"a/Apply": {"f:data": {}}}


def test_the_same_value_is_shared_and_survives_either_manager_leaving() -> None:
    live = run(None, cm({"a": "1"}), "first")
    shared = run(live, cm({"a": "1", "b": "2"}), "second")
    assert owners(shared)["first/Apply"] == {"f:data": {"f:a": {}}}
    assert owners(shared)["second/Apply"] == {"f:data": {"f:a": {}, "f:b": {}}}
    first_gone = run(shared, cm(None), "first")
    assert first_gone["data"] == {"a": "1", "b": "2"}
    second_gone = run(first_gone, cm(None), "second")
    assert "data" not in second_gone


def test_force_takes_ownership_from_every_other_manager() -> None:
    live = run(None, cm({"a": "1"}), "first")
    live = update(live, lambda o: o["data"].update(b="2"), "kubectl-edit")
    obj = run(live, cm({"a": "9", "b": "9"}), "second", force=True)
    assert obj["data"] == {"a": "9", "b": "9"}
    assert owners(obj) == {"second/Apply": {"f:data": {"f:a": {}, "f:b": {}}}}


def test_an_update_takes_a_field_from_the_applier_who_then_conflicts_with_it() -> None:
    live = run(None, cm({"a": "1"}), "applier")
    edited = update(live, lambda o: o["data"].update(a="2"), "kubectl-edit")
    assert "applier/Apply" not in owners(edited)
    assert owners(edited)["kubectl-edit/Update"] == {"f:data": {"f:a": {}}}
    with pytest.raises(ssa.ConflictError, match='conflict with "kubectl-edit" using v1: .data.a'):
        run(edited, cm({"a": "1"}), "applier")


def test_a_field_another_manager_still_owns_is_not_pruned() -> None:
    live = run(None, cm({"a": "1"}), "applier")
    live = update(live, lambda o: o["data"].update(a="1", z="by-hand"), "kubectl-edit")
    live = run(live, cm({"a": "1", "b": "2"}), "applier")
    obj = run(live, cm(None), "applier")
    assert obj["data"] == {"z": "by-hand"}


# --- objects nobody owned yet, and kubectl's client-side apply -------------------------------

def test_an_object_without_managed_fields_belongs_to_before_first_apply() -> None:
    live = cm({"a": "1"}, uid="u")
    with pytest.raises(ssa.ConflictError, match='conflict with "before-first-apply" using v1: .data.a'):
        run(live, cm({"a": "2"}), "helm")
    obj = run(live, cm({"a": "1", "b": "2"}), "helm")
    assert owners(obj)["before-first-apply/Update"] == {"f:data": {".": {}, "f:a": {}}}


def last_applied(config: dict[str, Any]) -> str:
    return json.dumps(config, sort_keys=True, separators=(",", ":")) + "\n"


def client_side_applied(data: dict[str, str]) -> dict[str, Any]:
    """A ConfigMap as `kubectl apply` (client-side) leaves it: annotation plus an Update entry."""
    config = cm(data)
    obj = cm(data, uid="u", annotations={"kubectl.kubernetes.io/last-applied-configuration": last_applied(config)})
    managed_fields.on_create(obj, "kubectl-client-side-apply", CONFIGMAP)
    return obj


def test_kubectl_server_side_apply_may_change_what_the_last_applied_annotation_claims() -> None:
    live = client_side_applied({"a": "1"})
    obj = run(live, cm({"a": "2"}), "kubectl")
    assert obj["data"] == {"a": "2"}
    annotation = obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    assert json.loads(annotation)["data"] == {"a": "2"} and annotation.endswith("\n")
    assert owners(obj)["kubectl/Apply"] == {"f:data": {"f:a": {}}}


def test_the_last_applied_exception_is_only_for_kubectl_and_only_for_claimed_fields() -> None:
    live = client_side_applied({"a": "1"})
    with pytest.raises(ssa.ConflictError, match="kubectl-client-side-apply"):
        run(live, cm({"a": "2"}), "other-tool")
    edited = update(live, lambda o: o["data"].update(a="by-hand"), "kubectl-edit")
    with pytest.raises(ssa.ConflictError, match='"kubectl-edit" using v1: .data.a'):
        run(edited, cm({"a": "2"}), "kubectl")


# --- lists and maps by their schema -----------------------------------------------------------

def deployment(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "d"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec,
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}}}}


def run_deploy(live: dict | None, config: dict, manager: str, force: bool = False) -> dict[str, Any]:
    return run(live, config, manager, force, DEPLOYMENT, "apps/v1")


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"]


def test_keyed_lists_merge_item_by_item_between_managers() -> None:
    live = run_deploy(None, deployment([{"name": "main", "image": "nginx:1", "args": ["-a", "-b"]}]), "app")
    live = run_deploy(live, deployment([{"name": "sidecar", "image": "proxy"}]), "mesh")
    assert [c["name"] for c in containers(live)] == ["main", "sidecar"]
    live = run_deploy(live, deployment([{"name": "main", "image": "nginx:2", "args": ["-c"]}]), "app")
    assert containers(live) == [{"name": "main", "image": "nginx:2", "args": ["-c"]},
                                {"name": "sidecar", "image": "proxy"}]
    owned = owners(live)["mesh/Apply"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert owned == {'k:{"name":"sidecar"}': {".": {}, "f:image": {}, "f:name": {}}}


def test_an_atomic_list_is_owned_and_replaced_whole() -> None:
    live = run_deploy(None, deployment([{"name": "main", "image": "i", "args": ["-a"]}]), "app")
    main = owners(live)["app/Apply"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"main"}']
    assert main["f:args"] == {}
    with pytest.raises(ssa.ConflictError, match=r'\.spec\.template\.spec\.containers\[name="main"\]\.args'):
        run_deploy(live, deployment([{"name": "main", "image": "i", "args": ["-a", "-z"]}]), "other")


def test_an_atomic_map_is_owned_whole_so_a_new_key_conflicts() -> None:
    live = run_deploy(None, deployment([{"name": "main", "image": "i"}]), "app")
    assert owners(live)["app/Apply"]["f:spec"]["f:selector"] == {}
    config = deployment([{"name": "main", "image": "i"}])
    config["spec"]["selector"]["matchLabels"]["extra"] = "1"
    with pytest.raises(ssa.ConflictError, match=r"\.spec\.selector$"):
        run_deploy(live, config, "other")


def test_a_granular_map_lets_two_managers_own_different_keys_but_node_selector_is_atomic() -> None:
    config = deployment([{"name": "main", "image": "i"}])
    config["spec"]["template"]["metadata"]["annotations"] = {"disk": "ssd"}
    config["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    live = run_deploy(None, config, "app")
    other = deployment([{"name": "main", "image": "i"}])
    other["spec"]["template"]["metadata"]["annotations"] = {"zone": "a"}
    live = run_deploy(live, other, "hints")
    assert live["spec"]["template"]["metadata"]["annotations"] == {"disk": "ssd", "zone": "a"}
    other["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    with pytest.raises(ssa.ConflictError, match=r"\.spec\.template\.spec\.nodeSelector$"):
        run_deploy(live, other, "hints")


def test_set_lists_union_values_and_prune_only_the_appliers_own() -> None:
    live = run(None, cm(None, finalizers=["a.example/x"]), "first")
    live = run(live, cm(None, finalizers=["b.example/y"]), "second")
    assert live["metadata"]["finalizers"] == ["a.example/x", "b.example/y"]
    assert owners(live)["second/Apply"] == {"f:metadata": {"f:finalizers": {'v:"b.example/y"': {}}}}
    live = run(live, cm(None), "first")
    assert live["metadata"]["finalizers"] == ["b.example/y"]


def test_a_port_without_protocol_is_keyed_with_the_tcp_default() -> None:
    live = run_deploy(None, deployment([{"name": "main", "image": "i", "ports": [{"containerPort": 80}]}]), "app")
    ports = owners(live)["app/Apply"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"main"}']["f:ports"]
    assert list(ports) == ['k:{"containerPort":80,"protocol":"TCP"}']


def test_a_keyed_item_without_its_key_is_an_error_with_the_path() -> None:
    with pytest.raises(errors.APIError) as info:
        run_deploy(None, deployment([{"image": "i"}]), "app")
    assert info.value.code == 500
    assert info.value.message == (
        "failed to create typed patch object (d/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: "
        "element 0: associative list with keys has an element that omits key field \"name\" (and doesn't have "
        "default value)")


def test_duplicate_keys_in_the_configuration_are_an_error() -> None:
    with pytest.raises(errors.APIError, match=r'duplicate entries for key \[name="a"\]'):
        run_deploy(None, deployment([{"name": "a", "image": "i"}, {"name": "a", "image": "j"}]), "app")


def test_status_on_the_main_resource_is_not_owned_and_kept() -> None:
    live = run_deploy(None, deployment([{"name": "main", "image": "i"}]), "app")
    live["status"] = {"replicas": 3}
    config = deployment([{"name": "main", "image": "i"}])
    config["status"] = {"replicas": 1}
    obj = run_deploy(live, config, "app")
    assert "f:status" not in owners(obj)["app/Apply"]


CRD_SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "rules": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["host", "port"],
                  "items": {"type": "object", "properties": {"host": {"type": "string"}, "port": {"type": "integer"},
                                                               "path": {"type": "string"}}}},
        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                     "additionalProperties": {"type": "string"}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}


def widget(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}


def run_widget(live: dict | None, spec: dict[str, Any], manager: str, force: bool = False) -> dict[str, Any]:
    return run(live, widget(spec), manager, force, CRD_SCHEMA, "example.com/v1")


def test_a_crd_list_map_with_two_keys_merges_by_both() -> None:
    live = run_widget(None, {"rules": [{"host": "a", "port": 1, "path": "/"}]}, "one")
    live = run_widget(live, {"rules": [{"host": "a", "port": 2, "path": "/x"}]}, "two")
    assert [(r["host"], r["port"]) for r in live["spec"]["rules"]] == [("a", 1), ("a", 2)]
    assert list(owners(live)["two/Apply"]["f:spec"]["f:rules"]) == ['k:{"host":"a","port":2}']


def test_crd_atomic_map_and_untyped_fields() -> None:
    live = run_widget(None, {"selector": {"a": "1"}, "free": {"x": {"y": 1}, "list": [1, 2]}}, "one")
    spec_owned = owners(live)["one/Apply"]["f:spec"]
    assert spec_owned["f:selector"] == {}
    assert spec_owned["f:free"] == {"f:list": {}, "f:x": {".": {}, "f:y": {}}}
    with pytest.raises(ssa.ConflictError, match=r"\.spec\.free\.list"):
        run_widget(live, {"free": {"list": [1]}}, "two")
