"""LIST options are checked as kube's ValidateListOptions checks them, before anything is read:
every problem with resourceVersionMatch or sendInitialEvents comes back at once as a 422
`ListOptions.meta.k8s.io "" is invalid` (the `kubernetes` 36.0.3 Python client and plain HTTP).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from kubernetes import client as pyclient
from kubernetes.client.rest import ApiException

CMS = "/api/v1/namespaces/default/configmaps"
PREFIX = 'ListOptions.meta.k8s.io "" is invalid: '


async def test_the_python_clients_match_without_a_resource_version_is_invalid(api: Any) -> None:
    core = pyclient.CoreV1Api(pyclient.ApiClient(pyclient.Configuration(host=api.url)))
    with pytest.raises(ApiException) as raised:
        # The server runs on this loop and the Python client blocks: the call goes to a thread.
        await asyncio.to_thread(core.list_namespaced_config_map, "default", resource_version_match="Exact")
    body = json.loads(raised.value.body)
    assert (raised.value.status, body["reason"]) == (422, "Invalid")
    assert body["message"] == (PREFIX + "resourceVersionMatch: Forbidden: "
                               "resourceVersionMatch is forbidden unless resourceVersion is provided")
    assert body["details"] == {"group": "meta.k8s.io", "kind": "ListOptions", "causes": [{
        "reason": "FieldValueForbidden", "field": "resourceVersionMatch",
        "message": "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"}]}


@pytest.mark.parametrize(("query", "message"), [
    ("resourceVersionMatch=NotARealMatch",
     '[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, '
     'resourceVersionMatch: Unsupported value: "NotARealMatch": supported values: "Exact", "NotOlderThan", ""]'),
    ("resourceVersion=0&resourceVersionMatch=Exact",
     'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
    ("resourceVersion=1&resourceVersionMatch=NotOlderThan&continue=abc",
     "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"),
    ("sendInitialEvents=false", "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"),
], ids=["unknown match without a version", "exact at 0", "match with continue", "sendInitialEvents on a list"])
async def test_every_problem_is_one_invalid_answer(api: Any, query: str, message: str) -> None:
    status, body, _ = await api.request("GET", f"{CMS}?{query}")
    assert (status, body["reason"], body["message"]) == (422, "Invalid", PREFIX + message)


async def test_valid_matches_still_list(api: Any) -> None:
    status, body, _ = await api.request("GET", f"{CMS}?resourceVersion=0&resourceVersionMatch=NotOlderThan")
    assert (status, body["kind"]) == (200, "ConfigMapList")
