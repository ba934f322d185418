"""Webhook configurations' matchConditions are compiled when stored: a malformed CEL expression is
a 422 with "compilation failed", as upstream's "should reject ... invalid match conditions" expects,
and a valid one is stored and updated as sent."""

from __future__ import annotations

import pytest

from tests.conftest import InProcess

GROUP = "/apis/admissionregistration.k8s.io/v1"


def _configuration(kind: str, expression: str) -> dict:
    webhook = {"name": "w.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
               "clientConfig": {"url": "https://127.0.0.1:1/"},
               "matchConditions": [{"name": "c", "expression": expression}]}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": "hooks"},
            "webhooks": [webhook]}


@pytest.mark.parametrize("kind, resource", [("MutatingWebhookConfiguration", "mutatingwebhookconfigurations"),
                                            ("ValidatingWebhookConfiguration", "validatingwebhookconfigurations")])
async def test_an_invalid_match_condition_is_refused_and_nothing_is_stored(api: InProcess, kind: str,
                                                                           resource: str) -> None:
    status, body, _ = await api.request("POST", f"{GROUP}/{resource}", json=_configuration(kind, "... [] bad"))
    assert status == 422, body
    cause = body["details"]["causes"][0]
    assert cause["field"] == "webhooks[0].matchConditions[0].expression"
    assert "compilation failed" in cause["message"]
    status, _, _ = await api.request("GET", f"{GROUP}/{resource}/hooks")
    assert status == 404


async def test_a_valid_match_condition_is_stored(api: InProcess) -> None:
    config = _configuration("ValidatingWebhookConfiguration", "request.resource.group != 'coordination.k8s.io'")
    status, body, _ = await api.request("POST", f"{GROUP}/validatingwebhookconfigurations", json=config)
    assert status == 201, body
    assert body["webhooks"][0]["matchConditions"] == config["webhooks"][0]["matchConditions"]
