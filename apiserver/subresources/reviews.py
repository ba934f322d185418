"""The create-only review kinds: nothing is stored, the answer is the request with a status.

SelfSubjectAccessReview, SubjectAccessReview and LocalSubjectAccessReview (`kubectl auth can-i`),
SelfSubjectRulesReview (`can-i --list`), SelfSubjectReview (`kubectl auth whoami`) and TokenReview.
Until RBAC exists every authenticated user is allowed everything, so the reviews say so plainly
in their reason. Called by `app.py` for `create` on these resources.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from apiserver import auth, bodies, responses
from apiserver.context import Endpoint
from apiserver.subresources import token_review

_ALLOWED_REASON = "haru: every authenticated user is authorized (no RBAC yet)"


def _answer(ep: Endpoint, obj: dict[str, Any], status: dict[str, Any]) -> web.Response:
    bodies.check_kind(obj, ep.resource.api_version, ep.resource.kind)
    obj.setdefault("metadata", {})
    obj["metadata"].setdefault("creationTimestamp", None)
    obj["status"] = status
    return responses.json_response(obj, status=201)


async def create(ep: Endpoint, request: web.Request, user: auth.User) -> web.StreamResponse:
    obj = await bodies.read_object(request)
    kind = ep.resource.resource
    if kind in ("selfsubjectaccessreviews", "subjectaccessreviews", "localsubjectaccessreviews"):
        return _answer(ep, obj, {"allowed": True, "reason": _ALLOWED_REASON})
    if kind == "selfsubjectrulesreviews":
        return _answer(ep, obj, {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        })
    if kind == "selfsubjectreviews":
        return _answer(ep, obj, {"userInfo": user.info()})
    if kind == "tokenreviews":
        return _answer(ep, obj, token_review.status(ep, obj))
    raise AssertionError(f"not a review kind: {kind}")


REVIEW_RESOURCES = frozenset({
    ("authorization.k8s.io", "selfsubjectaccessreviews"), ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"), ("authorization.k8s.io", "selfsubjectrulesreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"), ("authentication.k8s.io", "tokenreviews"),
})
