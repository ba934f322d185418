"""The pieces the workload controllers share, as tables: label selectors, ControllerRef claiming
(keep, adopt, release), and expectations on a fake clock."""

from __future__ import annotations

from typing import Any

import pytest

from controllers import controller_refs, label_selectors
from controllers.expectations import Expectations

SELECTOR_CASES = [
    ("matchLabels needs every pair", {"matchLabels": {"app": "web", "tier": "front"}}, {"app": "web"}, False),
    ("extra labels on the object do not matter", {"matchLabels": {"app": "web"}}, {"app": "web", "x": "y"}, True),
    ("In takes one of the values", {"matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]}]},
     {"env": "b"}, True),
    ("In fails without the key", {"matchExpressions": [{"key": "env", "operator": "In", "values": ["a"]}]}, {}, False),
    ("NotIn holds without the key", {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["a"]}]}, {}, True),
    ("NotIn fails on a listed value", {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["a"]}]},
     {"env": "a"}, False),
    ("Exists needs the key", {"matchExpressions": [{"key": "env", "operator": "Exists"}]}, {"env": ""}, True),
    ("DoesNotExist refuses the key", {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]}, {"env": "a"}, False),
    ("an empty selector matches everything", {}, {"any": "thing"}, True),
    ("no selector matches nothing", None, {"any": "thing"}, False),
]


@pytest.mark.parametrize("selector, labels, want", [c[1:] for c in SELECTOR_CASES], ids=[c[0] for c in SELECTOR_CASES])
def test_label_selector(selector: dict[str, Any] | None, labels: dict[str, str], want: bool) -> None:
    assert label_selectors.matches(selector, labels) is want


def test_an_unknown_operator_is_an_error() -> None:
    with pytest.raises(label_selectors.InvalidSelector):
        label_selectors.matches({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, {"a": "2"})


OWNER = {"metadata": {"name": "rs", "uid": "owner-uid"}}


def _obj(name: str, labels: dict[str, str], controller: str | None = None, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "labels": labels}
    if controller:
        meta["ownerReferences"] = [{"kind": "ReplicaSet", "name": "x", "uid": controller, "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta}


CLAIM_CASES = [
    ("our own matching object is kept", _obj("a", {"app": "web"}, "owner-uid"), OWNER, "owned"),
    ("a matching orphan is adopted", _obj("a", {"app": "web"}), OWNER, "adopt"),
    ("our own object that stopped matching is released", _obj("a", {"app": "api"}, "owner-uid"), OWNER, "release"),
    ("another controller's object is left alone", _obj("a", {"app": "web"}, "other-uid"), OWNER, None),
    ("an orphan being deleted is not adopted", _obj("a", {"app": "web"}, deleting=True), OWNER, None),
    ("an owner being deleted adopts nothing", _obj("a", {"app": "web"}),
     {"metadata": {**OWNER["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}, None),
    ("an owner being deleted releases nothing", _obj("a", {"app": "api"}, "owner-uid"),
     {"metadata": {**OWNER["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}, None),
]


@pytest.mark.parametrize("obj, owner, where", [c[1:] for c in CLAIM_CASES], ids=[c[0] for c in CLAIM_CASES])
def test_claim(obj: dict[str, Any], owner: dict[str, Any], where: str | None) -> None:
    claimed = controller_refs.claim(owner, [obj], {"matchLabels": {"app": "web"}})
    got = {name: getattr(claimed, name) for name in ("owned", "adopt", "release")}
    assert got == {name: ([obj] if name == where else []) for name in got}


def test_the_adopt_and_release_patches_are_keyed_on_the_owner_and_guarded_by_the_object_uid() -> None:
    obj = _obj("a", {})
    assert controller_refs.adopt_patch(OWNER, "apps/v1", "ReplicaSet", obj) == {"metadata": {"ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "owner-uid", "controller": True,
         "blockOwnerDeletion": True}], "uid": "uid-a"}}
    assert controller_refs.release_patch(OWNER, obj) == {"metadata": {"ownerReferences": [
        {"$patch": "delete", "uid": "owner-uid"}], "uid": "uid-a"}}


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_expectations_wait_for_every_creation_and_deletion_or_the_ttl() -> None:
    clock = Clock()
    expectations = Expectations(ttl=300, clock=clock)
    assert expectations.satisfied("ns/rs")
    expectations.expect_creations("ns/rs", 2)
    expectations.creation_observed("ns/rs")
    assert not expectations.satisfied("ns/rs")
    expectations.creation_observed("ns/rs")
    assert expectations.satisfied("ns/rs")

    expectations.expect_deletions("ns/rs", ["ns/a", "ns/b"])
    expectations.deletion_observed("ns/rs", "ns/a")
    expectations.deletion_observed("ns/rs", "ns/a")  # twice is once
    assert not expectations.satisfied("ns/rs")
    clock.now = 301  # an event lost for five minutes no longer holds the controller back
    assert expectations.satisfied("ns/rs")
