"""`additionalProperties` beside `properties` in a CRD schema: upstream allows only `true` there."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
FIELD = "spec.versions[0].schema.openAPIV3Schema.properties[spec].additionalProperties"


def _crd(spec_schema: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": spec_schema}}}}]}}


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"size": {"type": "string"}}, "additionalProperties": True},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "object", "additionalProperties": False},
], ids=["true beside properties", "a schema alone (a map)", "false alone"])
async def test_accepted(api, schema):
    status, body, _ = await api.request("POST", CRDS, json=_crd(schema))
    assert status == 201, body


@pytest.mark.parametrize("extra", [False, {"type": "string"}], ids=["false", "a schema"])
async def test_false_or_a_schema_beside_properties_is_refused(api, extra):
    schema = {"type": "object", "properties": {"size": {"type": "string"}}, "additionalProperties": extra}
    status, body, _ = await api.request("POST", CRDS, json=_crd(schema))
    assert status == 422, body
    causes = [(c["field"], c["message"]) for c in body["details"]["causes"]]
    assert causes == [(FIELD, "Forbidden: additionalProperties and properties are mutual exclusive")]
    status, _, _ = await api.request("GET", f"{CRDS}/gadgets.example.com")
    assert status == 404


async def test_additional_properties_at_the_root_is_refused(api):
    crd = _crd({"type": "object"})
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["additionalProperties"] = {"type": "string"}
    status, body, _ = await api.request("POST", CRDS, json=crd)
    assert status == 422, body
    assert ("spec.versions[0].schema.openAPIV3Schema.additionalProperties", "Forbidden: must not be used at the root") \
        in [(c["field"], c["message"]) for c in body["details"]["causes"]]


async def test_keys_a_node_does_not_name_are_kept_under_additional_properties_true(api):
    schema = {"type": "object", "properties": {"size": {"type": "string"}}, "additionalProperties": True}
    status, body, _ = await api.request("POST", CRDS, json=_crd(schema))
    assert status == 201, body
    path = "/apis/example.com/v1/namespaces/default/gadgets"
    for _ in range(200):  # served once the CRD controller established it
        status, _, _ = await api.request("GET", path)
        if status == 200:
            break
        await asyncio.sleep(0.025)
    gadget = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"},
              "spec": {"size": "L", "color": "red"}, "unknown": 1}
    status, body, headers = await api.request("POST", path, json=gadget)
    assert status == 201, body
    assert body["spec"] == {"size": "L", "color": "red"} and "unknown" not in body
    assert headers.getall("Warning") == ['299 - "unknown field \\"unknown\\""']
