"""DRA admin access: requests for it need the namespace label, at create and when a status grants it."""

from __future__ import annotations

from typing import Any

import pytest

from apiserver.kinds import admin_access
from tests.apiserver.kinds.writes import create, created, edited, messages, strategy, update

REFUSED = ("Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the "
           "containing namespace")
NAMESPACES: dict[str, Any] = {
    "plain": {"metadata": {"name": "plain"}},
    "admins": {"metadata": {"name": "admins", "labels": {admin_access.LABEL: "true"}}},
    "not-quite": {"metadata": {"name": "not-quite", "labels": {admin_access.LABEL: "True"}}},
}


def request(name: str, **exactly: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": "gpu.example.com", **exactly}}


def claim(namespace: str, *requests: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "rc1", "namespace": namespace}, "spec": {"devices": {"requests": list(requests)}}}


def claims():
    s = strategy("resource.k8s.io", "resourceclaims")
    s.namespaces = NAMESPACES.get
    return s


@pytest.mark.parametrize("obj, expected", [
    (claim("plain", request("gpu")), []),
    (claim("plain", request("gpu", adminAccess=False)), []),
    (claim("admins", request("gpu", adminAccess=True)), []),
    (claim("plain", request("gpu", adminAccess=True)), [f"spec.devices.requests[0].adminAccess: {REFUSED}"]),
    (claim("not-quite", request("gpu", adminAccess=True)), [f"spec.devices.requests[0].adminAccess: {REFUSED}"]),
    (claim("plain", request("a"), request("b", adminAccess=True), request("c", adminAccess=True)),
     [f"spec.devices.requests[1].adminAccess: {REFUSED}"]),
    (claim("plain", {"name": "any", "firstAvailable": [{"name": "big", "deviceClassName": "gpu.example.com"}]}), []),
    (claim("gone", request("gpu", adminAccess=True)),
     ['spec.devices.requests[0].adminAccess: Internal error: could not retrieve namespace to verify admin access: '
      'namespaces "gone" not found']),
], ids=["a claim without admin access needs no label", "nor does one that says false",
        "a labelled namespace may ask for admin access", "an unlabelled one may not",
        "the label value must be exactly true", "the first request asking is the one named",
        "subrequests cannot ask for admin access", "a namespace that cannot be read is an internal error"])
def test_claims_at_create(obj, expected):
    assert messages(create(claims(), obj)) == expected


def test_a_template_is_checked_and_named_as_upstream_names_it():
    s = strategy("resource.k8s.io", "resourceclaimtemplates", has_status=False)
    s.namespaces = NAMESPACES.get
    template = {"metadata": {"name": "t1", "namespace": "plain"},
                "spec": {"spec": claim("plain", request("gpu", adminAccess=True))["spec"]}}
    # One shared upstream helper reports the claim's path for templates too.
    assert messages(create(s, template)) == [f"spec.devices.requests[0].adminAccess: {REFUSED}"]
    template["metadata"]["namespace"] = "admins"
    assert messages(create(s, edited(template))) == []


def test_updates_are_not_checked_again_because_the_spec_cannot_change():
    s = claims()
    old = created(s, claim("admins", request("gpu", adminAccess=True)))
    s.namespaces = {"admins": NAMESPACES["plain"]}.get  # the label was removed since
    new = edited(old)
    new["metadata"]["labels"] = {"x": "y"}
    assert messages(update(s, new, old)) == []


def granted(obj: dict[str, Any], admin: bool | None) -> dict[str, Any]:
    result = {"request": "gpu", "driver": "gpu.example.com", "pool": "node-a", "device": "gpu-0"}
    if admin is not None:
        result["adminAccess"] = admin
    obj = edited(obj)
    obj["status"] = {"allocation": {"devices": {"results": [result]}}}
    return obj


@pytest.mark.parametrize("namespace, before, after, expected", [
    ("plain", None, False, []),
    ("admins", None, True, []),
    ("plain", None, True, [f"status.allocation.devices.results[0].adminAccess: {REFUSED}"]),
    ("plain", True, True, []),
], ids=["an allocation without admin access needs no label", "a labelled namespace may be granted it",
        "an unlabelled one may not", "what was granted before stays granted"])
def test_status_writes_granting_admin_access(namespace, before, after, expected):
    s = claims()
    old = created(s, claim(namespace, request("gpu")))
    if before is not None:
        old = granted(old, before)
    status = s.status_strategy()
    new = granted(old, after)
    status.prepare_for_update(new, old)
    assert messages(status.validate_update(new, old)) == expected


CLAIMS = "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims"


async def test_the_api_refuses_then_accepts_once_the_namespace_is_labelled(api) -> None:
    await api.request("POST", "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                           "metadata": {"name": "gpus"}})
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", **claim("gpus", request("gpu", adminAccess=True))}
    status, answer, _ = await api.request("POST", CLAIMS.format(ns="gpus"), json=body)
    assert status == 422 and answer["reason"] == "Invalid"
    assert answer["message"] == f'ResourceClaim.resource.k8s.io "rc1" is invalid: spec.devices.requests[0].adminAccess: {REFUSED}'
    assert answer["details"]["causes"] == [{"reason": "FieldValueForbidden", "field": "spec.devices.requests[0].adminAccess",
                                            "message": REFUSED}]
    status, _, _ = await api.request("GET", CLAIMS.format(ns="gpus") + "/rc1")
    assert status == 404
    patch = {"metadata": {"labels": {admin_access.LABEL: "true"}}}
    status, _, _ = await api.request("PATCH", "/api/v1/namespaces/gpus", json=patch,
                                     headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200
    status, stored, _ = await api.request("POST", CLAIMS.format(ns="gpus"), json=body)
    assert status == 201 and stored["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] is True


def test_a_populated_allocation_is_fixed_and_reservations_need_one():
    s = claims()
    old = granted(created(s, claim("plain", request("gpu"))), None)
    status = s.status_strategy()
    moved = edited(old)
    moved["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-1"
    status.prepare_for_update(moved, old)
    assert messages(status.validate_update(moved, old)) == [
        'status.allocation: Invalid value: {"devices":{"results":[{"request":"gpu","driver":"gpu.example.com",'
        '"pool":"node-a","device":"gpu-1"}]}}: field is immutable']
    unallocated = created(s, claim("plain", request("gpu")))
    reserved = edited(unallocated)
    reserved["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}
    status.prepare_for_update(reserved, unallocated)
    assert messages(status.validate_update(reserved, unallocated)) == [
        "status.reservedFor: Forbidden: may not be specified when `allocated` is not set"]
    deallocated = edited(old)
    deallocated["status"] = {}
    status.prepare_for_update(deallocated, old)
    assert messages(status.validate_update(deallocated, old)) == []
