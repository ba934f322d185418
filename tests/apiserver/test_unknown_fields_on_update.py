"""An update's unknown fields are found wherever the write changed the object, even though the
walk skips what equals the stored object (`field_validation.prune(..., stored)`)."""

from __future__ import annotations

import copy
from typing import Any

from apiserver import field_validation, schemas


def _pod_schema() -> dict[str, Any]:
    schema = schemas.for_kind("", "v1", "Pod")
    assert schema is not None
    return schema


def _stored() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}, {"name": "d", "image": "busybox"}]},
            "status": {"phase": "Running"}}


def test_unknown_fields_in_changed_parts_are_dropped_and_reported() -> None:
    stored = _stored()
    new = copy.deepcopy(stored)
    new["spec"]["containers"][1]["bogus"] = 1  # a changed list item
    new["metadata"]["labels"]["x"] = "y"
    new["status"]["nope"] = True  # a changed map
    new["extra"] = {}
    unknown = field_validation.prune(new, _pod_schema(), stored)
    assert sorted(unknown) == ["extra", "spec.containers[1].bogus", "status.nope"]
    assert "bogus" not in new["spec"]["containers"][1] and "nope" not in new["status"]


def test_the_same_answer_with_and_without_the_stored_object() -> None:
    stored = _stored()
    new = copy.deepcopy(stored)
    new["spec"]["containers"].append({"name": "e", "image": "x", "what": 1})
    with_stored, without = copy.deepcopy(new), copy.deepcopy(new)
    assert field_validation.prune(with_stored, _pod_schema(), stored) == \
        field_validation.prune(without, _pod_schema()) == ["spec.containers[2].what"]
    assert with_stored == without
