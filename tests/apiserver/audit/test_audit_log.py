"""The audit log of a running server, read back as JSON lines: what each level records, the stages,
impersonation, the authorization annotations, `Audit-Id`. Driven by the `kubernetes` 36.0.3
Python client and raw HTTP against an in-process server started with the audit flags."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import msgspec
import pytest
import pytest_asyncio
from kubernetes import client as pyclient
from kubernetes.client.rest import ApiException

from apiserver import runner
from apiserver.app import AUDITOR
from apiserver.audit import options
from tests.conftest import InProcess

POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitManagedFields: true
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
- level: Request
  omitStages: [RequestReceived]
  resources: [{group: "", resources: ["secrets"]}]
- level: None
  resources: [{group: "coordination.k8s.io"}]
- level: Metadata
"""
_MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


@pytest_asyncio.fixture
async def audited(tmp_path: Path) -> AsyncIterator[tuple[InProcess, Path]]:
    (tmp_path / "policy.yaml").write_text(POLICY)
    log = tmp_path / "audit.log"
    running = await runner.start(str(tmp_path / "data"), port=0, audit=options.Options(
        log_path=str(log), policy_file=str(tmp_path / "policy.yaml")))
    session = aiohttp.ClientSession()
    try:
        yield InProcess(running, session), log
    finally:
        await session.close()
        await running.stop()


def _events(log: Path, audit_id: str, api: InProcess | None = None) -> list[dict[str, Any]]:
    if api is not None:
        api.running.server.extra[AUDITOR].log.flush()  # lines are written in batches, every 20 ms
    return [event for event in map(msgspec.json.decode, log.read_bytes().splitlines()) if event["auditID"] == audit_id]


def _core(api: InProcess) -> pyclient.CoreV1Api:
    return pyclient.CoreV1Api(pyclient.ApiClient(pyclient.Configuration(host=api.url)))


async def test_a_create_at_request_response_records_both_objects_without_managed_fields(audited: Any) -> None:
    api, log = audited
    core = _core(api)
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}, "data": {"k": "v"}}
    _, _, headers = await asyncio.to_thread(core.create_namespaced_config_map_with_http_info, "default", body)
    core.api_client.close()
    audit_id = headers["Audit-Id"]
    received, complete = _events(log, audit_id, api)
    assert [received["stage"], complete["stage"]] == ["RequestReceived", "ResponseComplete"]
    assert list(complete) == ["kind", "apiVersion", "level", "auditID", "stage", "requestURI", "verb", "user",
                              "sourceIPs", "userAgent", "objectRef", "responseStatus", "requestObject",
                              "responseObject", "requestReceivedTimestamp", "stageTimestamp", "annotations"]
    assert complete["kind"] == "Event" and complete["apiVersion"] == "audit.k8s.io/v1"
    assert complete["level"] == "RequestResponse" and complete["verb"] == "create"
    assert complete["requestURI"] == "/api/v1/namespaces/default/configmaps"
    assert complete["user"]["username"] == "kubernetes-admin"
    assert complete["sourceIPs"] == ["127.0.0.1"] and complete["userAgent"].startswith("OpenAPI-Generator/")
    assert complete["objectRef"] == {"resource": "configmaps", "namespace": "default", "name": "c1", "apiVersion": "v1"}
    assert complete["responseStatus"] == {"metadata": {}, "code": 201}
    assert complete["requestObject"]["data"] == {"k": "v"}
    assert complete["responseObject"]["metadata"]["name"] == "c1"
    assert "managedFields" not in complete["responseObject"]["metadata"]
    assert complete["annotations"] == {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}
    assert "annotations" not in received  # authorization runs after RequestReceived
    assert _MICRO.match(complete["requestReceivedTimestamp"]) and _MICRO.match(complete["stageTimestamp"])
    assert received["requestReceivedTimestamp"] == complete["requestReceivedTimestamp"]


async def test_an_error_keeps_the_bounded_status_and_request_level_omits_the_response(audited: Any) -> None:
    api, log = audited
    core = _core(api)
    with pytest.raises(ApiException) as missing:
        await asyncio.to_thread(core.read_namespaced_secret, "nope", "default")
    core.api_client.close()
    assert missing.value.status == 404
    (complete,) = _events(log, missing.value.headers["Audit-Id"], api)  # RequestReceived is omitted for secrets
    assert complete["stage"] == "ResponseComplete" and complete["level"] == "Request"
    assert complete["responseStatus"] == {"metadata": {}, "status": "Failure", "message": 'secrets "nope" not found',
                                          "reason": "NotFound", "details": {"name": "nope", "kind": "secrets"},
                                          "code": 404}
    assert "responseObject" not in complete and "requestObject" not in complete


async def test_a_watch_has_a_response_started_stage_and_metadata_has_no_objects(audited: Any) -> None:
    api, log = audited
    async with api.session.get(api.url + "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1") as resp:
        await resp.read()
        audit_id = resp.headers["Audit-Id"]
    stages = _events(log, audit_id, api)
    assert [e["stage"] for e in stages] == ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    assert all(e["level"] == "Metadata" and e["verb"] == "watch" for e in stages)
    assert stages[1]["responseStatus"] == {"metadata": {}, "code": 200}
    assert not any("requestObject" in e or "responseObject" in e for e in stages)


async def test_level_none_records_nothing_and_the_clients_audit_id_is_kept(audited: Any) -> None:
    api, log = audited
    status, _, headers = await api.request("GET", "/healthz", headers={"Audit-ID": "my-own-id"})
    assert status == 200 and headers["Audit-Id"] == "my-own-id"
    status, _, headers = await api.request("GET", "/apis/coordination.k8s.io/v1/leases")
    assert status == 200 and headers["Audit-Id"]
    assert _events(log, "my-own-id", api) == [] and _events(log, headers["Audit-Id"], api) == []


async def test_impersonation_names_both_users(audited: Any) -> None:
    api, log = audited
    status, _, headers = await api.request("GET", "/api/v1/namespaces", headers={
        "Impersonate-User": "jane", "Impersonate-Group": "devs"})
    assert status == 200
    complete = _events(log, headers["Audit-Id"], api)[-1]
    assert complete["user"]["username"] == "kubernetes-admin"
    assert complete["impersonatedUser"] == {"username": "jane", "groups": ["devs", "system:authenticated"]}
    assert list(complete).index("impersonatedUser") == list(complete).index("user") + 1


async def test_a_forbidden_request_records_the_decision(tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_text(POLICY)
    log = tmp_path / "audit.log"
    running = await runner.start(str(tmp_path / "data"), port=0, authorization_mode="RBAC",
                                 audit=options.Options(log_path=str(log), policy_file=str(tmp_path / "policy.yaml")))
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(running.url + "/api/v1/namespaces/default/pods",
                                   headers={"Impersonate-User": "jane"}) as resp:
                assert resp.status == 403
                audit_id = resp.headers["Audit-Id"]
    finally:
        await running.stop()
    complete = _events(log, audit_id)[-1]  # stopped: the log was flushed at close
    assert complete["annotations"]["authorization.k8s.io/decision"] == "forbid"
    assert "authorization.k8s.io/reason" in complete["annotations"]
    assert complete["responseStatus"]["code"] == 403 and complete["responseStatus"]["reason"] == "Forbidden"


async def test_without_an_audit_log_every_answer_still_has_an_audit_id(api: InProcess) -> None:
    status, _, headers = await api.request("GET", "/api/v1/namespaces/default/configmaps")
    assert status == 200 and re.match(r"^[0-9a-f-]{36}$", headers["Audit-Id"])
