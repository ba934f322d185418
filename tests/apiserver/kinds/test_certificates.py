"""CertificateSigningRequests through the API: requester fields, approval, status, validation."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from apiserver import auth
from apiserver.kinds import certificate_validation
from tests.apiserver.kinds.csr_requests import request_field
from tests.apiserver.kinds.writes import create, messages, strategy

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


def a_csr(name: str = "alice", **spec: Any) -> dict[str, Any]:
    body = {"request": request_field(name), "signerName": "example.com/signer", "usages": ["client auth"]}
    body.update(spec)
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name}, "spec": body}


def condition(kind: str, status: str = "True", **extra: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": "Test", "message": "by a test", **extra}


async def _created(api, name: str = "alice") -> dict[str, Any]:
    status, body, _ = await api.request("POST", CSRS, json=a_csr(name))
    assert status == 201, body
    return body


async def test_a_new_request_records_who_asked_and_starts_with_no_conditions(api):
    body = a_csr(username="mallory", groups=["system:masters"], uid="forged", extra={"x": ["y"]})
    body["status"] = {"conditions": [condition("Approved")]}
    status, csr, _ = await api.request("POST", CSRS, json=body)
    assert status == 201, csr
    assert csr["spec"]["username"] == "kubernetes-admin"
    assert csr["spec"]["groups"] == ["system:masters", "system:authenticated"]
    assert "uid" not in csr["spec"] and "extra" not in csr["spec"]
    assert csr["status"] == {}
    assert "generation" not in csr["metadata"]


def test_uid_and_extra_of_the_requester_are_copied():
    s = strategy("certificates.k8s.io", "certificatesigningrequests", namespaced=False)
    s.requester = auth.User("system:node:n1", ("system:nodes",), uid="u-1", extra={"scopes": ("a", "b")})
    csr = a_csr()
    assert create(s, csr) == []
    assert csr["spec"]["username"] == "system:node:n1" and csr["spec"]["uid"] == "u-1"
    assert csr["spec"]["groups"] == ["system:nodes"] and csr["spec"]["extra"] == {"scopes": ["a", "b"]}


async def test_approval_adds_the_condition_and_stamps_its_times(api):
    csr = await _created(api)
    csr["status"] = {"conditions": [condition("Approved")]}
    csr["spec"]["usages"] = ["server auth"]  # only conditions change through /approval
    status, approved, _ = await api.request("PUT", f"{CSRS}/alice/approval", json=csr)
    assert status == 200, approved
    [cond] = approved["status"]["conditions"]
    assert cond["type"] == "Approved" and cond["lastUpdateTime"] and cond["lastTransitionTime"]
    assert approved["spec"]["usages"] == ["client auth"]
    status, got, _ = await api.request("GET", f"{CSRS}/alice")
    assert got["status"]["conditions"] == approved["status"]["conditions"]


async def test_approved_and_denied_together_are_refused_and_nothing_is_stored(api):
    csr = await _created(api)
    csr["status"] = {"conditions": [condition("Approved"), condition("Denied")]}
    status, body, _ = await api.request("PUT", f"{CSRS}/alice/approval", json=csr)
    assert status == 422, body
    assert 'status.conditions: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive' \
        in body["message"]
    status, got, _ = await api.request("GET", f"{CSRS}/alice")
    assert got["status"] == {}


async def test_a_plain_update_cannot_approve_or_change_spec(api):
    csr = await _created(api)
    csr["status"] = {"conditions": [condition("Approved")]}
    csr["spec"]["signerName"] = "example.com/other"
    csr["metadata"]["labels"] = {"team": "a"}
    status, body, _ = await api.request("PUT", f"{CSRS}/alice", json=csr)
    assert status == 200, body
    assert body["status"] == {} and body["spec"]["signerName"] == "example.com/signer"
    assert body["metadata"]["labels"] == {"team": "a"}


async def test_status_may_add_a_certificate_but_not_approve(api):
    csr = await _created(api)
    csr["status"] = {"conditions": [condition("Approved")]}
    status, approved, _ = await api.request("PUT", f"{CSRS}/alice/approval", json=csr)
    assert status == 200
    # The signer's write: a certificate and a Failed-free status; its copy of Approved is ignored.
    approved["status"]["conditions"][0]["message"] = "rewritten by the signer"
    approved["status"]["certificate"] = base64.b64encode(_self_signed_pem()).decode()
    status, issued, _ = await api.request("PUT", f"{CSRS}/alice/status", json=approved)
    assert status == 200, issued
    assert issued["status"]["conditions"][0]["message"] == "by a test"
    assert issued["status"]["certificate"] == approved["status"]["certificate"]
    issued["status"]["conditions"].append(condition("Denied"))
    status, body, _ = await api.request("PUT", f"{CSRS}/alice/status", json=issued)
    assert status == 422 and 'updates may not add a condition of type "Denied"' in body["message"]


async def test_approval_may_not_remove_an_approval(api):
    csr = await _created(api)
    csr["status"] = {"conditions": [condition("Approved")]}
    status, approved, _ = await api.request("PUT", f"{CSRS}/alice/approval", json=csr)
    approved["status"]["conditions"] = []
    status, body, _ = await api.request("PUT", f"{CSRS}/alice/approval", json=approved)
    assert status == 422
    assert 'status.conditions: Forbidden: updates may not remove a condition of type "Approved"' in body["message"]


@pytest.mark.parametrize("spec, expected", [
    ({"request": base64.b64encode(b"not a pem").decode()},
     "PEM block type must be CERTIFICATE REQUEST"),
    ({"usages": []}, "spec.usages: Required value"),
    ({"usages": ["client auth", "flying"]}, 'spec.usages[1]: Unsupported value: "flying"'),
    ({"usages": ["client auth", "client auth"]}, 'spec.usages[1]: Duplicate value: "client auth"'),
    ({"signerName": "signer"}, "must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    ({"signerName": "example/signer"}, "should be a domain with at least two segments separated by dots"),
    ({"signerName": "kubernetes.io/legacy-unknown"}, "the legacy signerName is not allowed via this API version"),
    ({"expirationSeconds": 60}, "may not specify a duration less than 600 seconds (10 minutes)"),
], ids=["a request that is not PEM", "no usages", "an unknown usage", "a usage twice", "a signer without a domain",
        "a signer domain without a dot", "the legacy signer", "a duration under ten minutes"])
def test_invalid_requests(spec, expected):
    s = strategy("certificates.k8s.io", "certificatesigningrequests", namespaced=False)
    csr = a_csr(**spec)
    assert any(expected in m for m in messages(create(s, csr))), messages(create(s, a_csr(**spec)))


def test_a_tampered_request_fails_its_signature_check():
    pem = bytearray(base64.b64decode(request_field("tamper")))
    der = base64.b64decode(b"".join(pem.splitlines()[1:-1]))
    # flip one byte of the subject name: the signature no longer covers what is there
    at = der.find(b"tamper")
    der = der[:at] + b"T" + der[at + 1:]
    body = b"-----BEGIN CERTIFICATE REQUEST-----\n" + base64.encodebytes(der) + b"-----END CERTIFICATE REQUEST-----\n"
    assert certificate_validation._request_problem(base64.b64encode(body).decode()) == "x509: ECDSA verification failure"
    assert certificate_validation._request_problem(request_field("tamper")) is None


def _self_signed_pem() -> bytes:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "alice")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM)
