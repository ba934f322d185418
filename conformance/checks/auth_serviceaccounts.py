"""ServiceAccount, root CA ConfigMap, SubjectReview and CertificateSigningRequest behaviours of
upstream's test/e2e/auth (service_accounts.go, subjectreviews.go, certificates.go) that are pure API."""

from __future__ import annotations

import base64
import dataclasses
import datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from client import errors
from client.rest import RestClient
from conformance.checks._confcore_support import retry_on_conflict
from conformance.checks._confupstream_support import api_operations, gone, saw, watch_events
from conformance.context import Context, Obj
from conformance.registry import conformance

ROOT_CA = "kube-root-ca.crt"


@conformance("[sig-auth] ServiceAccounts should run through the lifecycle of a ServiceAccount [Conformance]",
             area="auth")
async def serviceaccount_lifecycle(ctx: Context) -> None:
    name = ctx.name("test-service-account")
    accounts = ctx.api.resource("v1", "ServiceAccount")
    since = (await ctx.list("v1", "ServiceAccount"))["metadata"]["resourceVersion"]
    await ctx.create({"apiVersion": "v1", "kind": "ServiceAccount",
                      "metadata": {"name": name, "labels": {"test-serviceaccount-static": "true"}}})
    await watch_events(ctx, accounts, ctx.namespace, since, lambda evs: saw(evs, "ADDED", name),
                       label_selector="test-serviceaccount-static=true")
    patched = await ctx.patch("v1", "ServiceAccount", name, {"automountServiceAccountToken": False})
    assert patched.get("automountServiceAccountToken") is False, f"the patch did not show: {patched}"
    everywhere = await ctx.api.list(accounts, None, label_selector="test-serviceaccount-static=true")
    mine = [a for a in everywhere["items"] if a["metadata"]["namespace"] == ctx.namespace]
    assert [a["metadata"]["name"] for a in mine] == [name] and mine[0].get("automountServiceAccountToken") is False, \
        f"listing across namespaces found {mine}"
    since = everywhere["metadata"]["resourceVersion"]
    await ctx.api.delete_collection(accounts, ctx.namespace, label_selector="test-serviceaccount-static=true")
    await watch_events(ctx, accounts, ctx.namespace, since, lambda evs: saw(evs, "DELETED", name),
                       label_selector="test-serviceaccount-static=true")


@conformance("[sig-auth] ServiceAccounts should update a ServiceAccount [Conformance]", area="auth")
async def serviceaccount_update(ctx: Context) -> None:
    name = ctx.name("e2e-sa")
    await ctx.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})

    async def attempt() -> Obj:
        current = await ctx.get("v1", "ServiceAccount", name)
        current["automountServiceAccountToken"] = True
        current["metadata"].setdefault("labels", {})["e2e-updated"] = "true"
        return await ctx.update(current)
    updated = await retry_on_conflict(attempt)
    assert updated.get("automountServiceAccountToken") is True, f"the update did not show: {updated}"
    read = await ctx.get("v1", "ServiceAccount", name)
    assert read["metadata"]["labels"].get("e2e-updated") == "true" and read["automountServiceAccountToken"] is True


@conformance("[sig-auth] ServiceAccounts should guarantee kube-root-ca.crt exist in any namespace [Conformance]",
             area="auth")
async def root_ca_configmap(ctx: Context) -> None:
    async def present() -> Obj:
        cm = await ctx.get("v1", "ConfigMap", ROOT_CA)
        assert (cm.get("data") or {}).get("ca.crt"), f"{ROOT_CA} has no ca.crt: {cm}"
        return cm
    original = await ctx.eventually(present, what=f"{ROOT_CA} in a new namespace")
    await ctx.delete("v1", "ConfigMap", ROOT_CA)
    recreated = await ctx.eventually(present, what=f"{ROOT_CA} to be recreated after a delete")
    assert recreated["data"]["ca.crt"] == original["data"]["ca.crt"]

    async def tamper() -> Obj:
        cm = await ctx.get("v1", "ConfigMap", ROOT_CA)
        cm["data"] = {"ca.crt": "invalid"}
        return await ctx.update(cm)
    await retry_on_conflict(tamper)

    async def reconciled() -> bool:
        cm = await present()
        return cm["data"]["ca.crt"] == original["data"]["ca.crt"]
    await ctx.eventually(reconciled, what=f"{ROOT_CA} to be reconciled after a modification")


async def _token(ctx: Context, account: str) -> str:
    review = await ctx.api.request("POST", f"/api/v1/namespaces/{ctx.namespace}/serviceaccounts/{account}/token",
                                   body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                         "spec": {"expirationSeconds": 3600}})
    token = (review.get("status") or {}).get("token")
    assert token, f"TokenRequest returned no token: {review}"
    return token


@conformance("[sig-auth] SubjectReview should support SubjectReview API operations [Conformance]", area="auth")
async def subject_review(ctx: Context) -> None:
    account = ctx.name("e2e-sa")
    await ctx.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}})
    user = f"system:serviceaccount:{ctx.namespace}:{account}"
    token = await _token(ctx, account)
    as_account = dataclasses.replace(ctx.api.config, token=token, client_cert_pem=None, client_key_pem=None)
    async with RestClient(as_account, user_agent="haru-conformance/1.36") as client:
        try:
            await client.list(ctx.api.resource("v1", "ConfigMap"), ctx.namespace)
            actually_allowed = True
        except errors.APIError as err:
            assert err.code == 403, f"listing configmaps as the service account: expected 200 or 403, got {err}"
            actually_allowed = False
    attributes = {"verb": "list", "resource": "configmaps", "namespace": ctx.namespace, "version": "v1"}
    review = await ctx.api.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body={
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": ["system:authenticated", "system:serviceaccounts"],
                 "resourceAttributes": attributes}})
    assert review["status"]["allowed"] == actually_allowed, \
        f"the SubjectAccessReview says allowed={review['status']['allowed']}, the call said {actually_allowed}"
    local = await ctx.api.request("POST", f"/apis/authorization.k8s.io/v1/namespaces/{ctx.namespace}/"
                                  "localsubjectaccessreviews", body={
        "apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
        "metadata": {"namespace": ctx.namespace},
        "spec": {"user": user, "groups": ["system:authenticated", "system:serviceaccounts"],
                 "resourceAttributes": attributes}})
    assert local["status"]["allowed"] == actually_allowed, \
        f"the LocalSubjectAccessReview says allowed={local['status']['allowed']}, the call said {actually_allowed}"


_KEY = ec.generate_private_key(ec.SECP256R1())
_NAME = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "e2e.example.com")])


def _csr_request() -> str:
    request = x509.CertificateSigningRequestBuilder().subject_name(_NAME).sign(_KEY, hashes.SHA256())
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


def _self_signed() -> str:
    """A certificate for the request's key, as a signer would put in status.certificate."""
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(_NAME).issuer_name(_NAME).public_key(_KEY.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(hours=1)).sign(_KEY, hashes.SHA256()))
    return base64.b64encode(cert.public_bytes(serialization.Encoding.PEM)).decode()


@conformance("[sig-auth] Certificates API [Privileged:ClusterAdmin] should support CSR API operations [Conformance]",
             area="auth")
async def csr_api(ctx: Context) -> None:
    csrs = ("certificates.k8s.io/v1", "CertificateSigningRequest")
    request = _csr_request()
    await api_operations(ctx, lambda name: {
        "apiVersion": csrs[0], "kind": csrs[1], "metadata": {"name": name},
        "spec": {"request": request, "signerName": "k8s.io/e2e-fake-signer", "usages": ["client auth"],
                 "expirationSeconds": 3600}}, extra_subresources=("approval", "status"))
    name = f"e2e-csr-{ctx.namespace}"
    await ctx.create({"apiVersion": csrs[0], "kind": csrs[1], "metadata": {"name": name},
                      "spec": {"request": request, "signerName": "k8s.io/e2e-fake-signer", "usages": ["client auth"]}})
    approval = await ctx.get(*csrs, name, subresource="approval")
    assert approval["metadata"]["name"] == name
    approval["status"]["conditions"] = [{"type": "Approved", "status": "True", "reason": "E2E",
                                         "message": "Set from an e2e test"}]
    approved = await ctx.update(approval, subresource="approval")
    assert [c["type"] for c in approved["status"]["conditions"]] == ["Approved"], f"approval did not show: {approved}"
    patched = await ctx.patch(*csrs, name, {"status": {"conditions": [
        {"type": "Approved", "status": "True", "reason": "E2E", "message": "Patched from an e2e test"}]}},
        subresource="approval")
    assert [c.get("message") for c in patched["status"]["conditions"]] == ["Patched from an e2e test"], \
        f"the approval patch did not show: {patched['status']}"
    status = await ctx.get(*csrs, name, subresource="status")
    status["status"]["conditions"].append({"type": "StatusUpdate", "status": "True", "reason": "E2E",
                                           "message": "Set from an e2e test"})
    updated = await ctx.update(status, subresource="status")
    assert "StatusUpdate" in [c["type"] for c in updated["status"]["conditions"]], f"status update lost: {updated}"
    patched = await ctx.patch(*csrs, name, {"status": {"certificate": _self_signed()}}, subresource="status")
    assert patched["status"].get("certificate"), f"the status patch did not show: {patched['status']}"
    assert "Approved" in [c["type"] for c in patched["status"]["conditions"]], "a status patch dropped the approval"
    await ctx.delete(*csrs, name)
    await gone(ctx, *csrs, name)
