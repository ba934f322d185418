"""A review kind asked for as a Table or as metadata only is refused with 406, as kube-apiserver
refuses it (upstream's "should return a 406 for a backend which does not implement metadata")."""

from __future__ import annotations

import pytest

from tests.conftest import InProcess

REVIEW = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
          "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}}
PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


@pytest.mark.parametrize("accept", ["application/json;as=Table;v=v1;g=meta.k8s.io",
                                    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"])
async def test_a_review_has_no_table_or_metadata_form(api: InProcess, accept: str) -> None:
    status, body, _ = await api.request("POST", PATH, json=REVIEW, headers={"Accept": accept})
    assert status == 406, body
    assert body["reason"] == "NotAcceptable" and body["code"] == 406
    assert body["message"].startswith("only the following media types are accepted: application/json")


async def test_a_review_still_answers_plain_json(api: InProcess) -> None:
    status, body, _ = await api.request("POST", PATH, json=REVIEW, headers={"Accept": "application/json"})
    assert status == 201, body
    assert body["status"]["allowed"] is True
