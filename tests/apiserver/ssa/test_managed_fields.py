"""managed_fields: ownership for Update operations (create, update, patch) and managedFields that
clients send themselves."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver import managed_fields, schemas
from apiserver.ssa import apply as ssa

CONFIGMAP = schemas.for_kind("", "v1", "ConfigMap")
DEPLOYMENT = schemas.for_kind("apps", "v1", "Deployment")
M: dict[str, Any] = {}


def owners(obj: dict[str, Any]) -> dict[str, Any]:
    return {f'{m["manager"]}/{m["operation"]}' + (f'/{m["subresource"]}' if m.get("subresource") else ""):
            m["fieldsV1"] for m in obj["metadata"].get("managedFields", [])}


def created(obj: dict[str, Any], manager: str = "creator", schema: Any = CONFIGMAP) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    managed_fields.on_create(obj, manager, schema)
    return obj


def updated(old: dict[str, Any], change: Any, manager: str, schema: Any = CONFIGMAP, subresource: str = "") -> dict:
    new = copy.deepcopy(old)
    change(new)
    managed_fields.on_update(old, new, manager, schema, subresource)
    return new


CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "uid": "u", "labels": {"a": "1"}},
      "data": {"k": "v"}}


def test_create_owns_every_field_with_markers_on_maps_as_kube_writes_them() -> None:
    assert owners(created(CM)) == {"creator/Update": {
        "f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}}}


def test_go_value_structs_get_no_marker_but_pointer_structs_do() -> None:
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 1, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
                       "template": {"spec": {"containers": [{"name": "c", "image": "i", "resources": {}}]}}}}
    spec = owners(created(deploy, schema=DEPLOYMENT))["creator/Update"]["f:spec"]
    assert "." not in spec and "." not in spec["f:strategy"] and "." not in spec["f:template"]
    assert spec["f:strategy"]["f:rollingUpdate"] == {".": {}, "f:maxSurge": {}}
    assert "." not in spec["f:template"]["f:spec"]["f:containers"]
    container = spec["f:template"]["f:spec"]["f:containers"]['k:{"name":"c"}']
    assert container == {".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}


UPDATE_CASES = [
    ("a changed field moves to the updater; the creator keeps the map it made",
     lambda o: o["data"].update(k="w"), {"editor/Update": {"f:data": {"f:k": {}}},
                                         "creator/Update": {"f:data": {}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}}}),
    ("a removed field leaves every owner",
     lambda o: o["metadata"].pop("labels"), {"creator/Update": {"f:data": {".": {}, "f:k": {}}}}),
    ("an update that changes nothing records nothing",
     lambda o: None, {"creator/Update": {"f:data": {".": {}, "f:k": {}},
                                         "f:metadata": {"f:labels": {".": {}, "f:a": {}}}}}),
    ("server-set metadata is never owned",
     lambda o: o["metadata"].update(resourceVersion="9", generation=2), {
         "creator/Update": {"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}}}),
]


@pytest.mark.parametrize("name,change,want", UPDATE_CASES, ids=[c[0] for c in UPDATE_CASES])
def test_update_ownership(name: str, change: Any, want: dict[str, Any]) -> None:
    assert owners(updated(created(CM), change, "editor")) == want


def test_the_same_updater_keeps_one_entry_with_the_union() -> None:
    obj = updated(created(CM), lambda o: o["data"].update(k="w"), "editor")
    obj = updated(obj, lambda o: o["data"].update(z="1"), "editor")
    assert owners(obj)["editor/Update"] == {"f:data": {"f:k": {}, "f:z": {}}}


def test_status_updates_are_a_separate_entry_and_main_updates_ignore_status() -> None:
    deploy = created({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"},
                      "spec": {"replicas": 1}}, schema=DEPLOYMENT)
    with_status = updated(deploy, lambda o: o.update(status={"replicas": 1}), "controller", DEPLOYMENT, "status")
    assert owners(with_status)["controller/Update/status"] == {"f:status": {"f:replicas": {}}}
    main = updated(with_status, lambda o: o["status"].update(replicas=5), "kubectl", DEPLOYMENT)
    assert "kubectl/Update" not in owners(main)


def test_managed_fields_sent_with_an_update_replace_the_live_ones() -> None:
    """kubectl's client-side to server-side migration is a JSON patch of managedFields."""
    obj = created(CM, manager="kubectl-client-side-apply")
    entry = obj["metadata"]["managedFields"][0]
    migrated = {**entry, "manager": "kubectl", "operation": "Apply"}
    new = updated(obj, lambda o: o["metadata"].update(managedFields=[migrated]), "kubectl")
    assert list(owners(new)) == ["kubectl/Apply"]


@pytest.mark.parametrize("reset", [[], [{}]], ids=["an empty list", "one empty entry"])
def test_managed_fields_reset_by_the_client(reset: list) -> None:
    new = updated(created(CM), lambda o: o["metadata"].update(managedFields=reset), "editor")
    assert "managedFields" not in new["metadata"]


def test_a_subresource_write_cannot_replace_managed_fields() -> None:
    obj = created({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}, "spec": {"replicas": 1}},
                  schema=DEPLOYMENT)
    new = updated(obj, lambda o: o["metadata"].update(managedFields=[]), "x", DEPLOYMENT, "status")
    assert "creator/Update" in owners(new)


def test_more_than_ten_update_managers_fold_the_oldest_into_ancient_changes() -> None:
    obj = created(CM)
    obj["metadata"]["managedFields"][0]["time"] = "2000-01-01T00:00:00Z"
    for index in range(10):
        obj = updated(obj, lambda o, i=index: o["data"].update({f"k{i}": "v"}), f"m{index}")
        newest = next(m for m in obj["metadata"]["managedFields"] if m["manager"] == f"m{index}")
        newest["time"] = f"2000-01-01T00:00:{index + 10:02d}Z"
    entries = {m["manager"]: m for m in obj["metadata"]["managedFields"]}
    assert len(entries) == 10 and "creator" not in entries and "m0" not in entries
    assert entries["ancient-changes"]["fieldsV1"]["f:data"]["f:k0"] == {}
    assert entries["ancient-changes"]["time"] == "2000-01-01T00:00:10Z"


def test_an_apply_entry_loses_a_field_to_an_update_without_conflict() -> None:
    applied = ssa.apply(None, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                               "data": {"k": "v", "j": "w"}}, "tool", force=False, schema=CONFIGMAP, api_version="v1")
    new = updated(applied, lambda o: o["data"].update(k="edited"), "kubectl-edit")
    assert owners(new) == {"tool/Apply": {"f:data": {"f:j": {}}}, "kubectl-edit/Update": {"f:data": {"f:k": {}}}}
