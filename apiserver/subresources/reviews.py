"""The create-only review kinds: nothing is stored, the answer is the request with a status.

SelfSubjectAccessReview, SubjectAccessReview and LocalSubjectAccessReview (`kubectl auth can-i`)
ask the server's authorizer chain (`authorization/chain.py`) the same question a request would;
SelfSubjectRulesReview (`can-i --list`) lists the rules that chain grants in a namespace;
SelfSubjectReview (`kubectl auth whoami`) and TokenReview answer who someone is. Spec validation
and the status fields are kube's (pkg/apis/authorization/validation, registry/authorization).
Called by `app.py` for `create` on these resources.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from apiserver import auth, bodies, errors, responses
from apiserver.authorization import chain
from apiserver.authorization.attributes import Attributes
from apiserver.context import Endpoint
from apiserver.subresources import token_review

_ACCESS_REVIEWS = ("selfsubjectaccessreviews", "subjectaccessreviews", "localsubjectaccessreviews")


def _answer(ep: Endpoint, obj: dict[str, Any], status: dict[str, Any]) -> web.Response:
    obj.setdefault("metadata", {})
    obj["metadata"].setdefault("creationTimestamp", None)
    obj["status"] = status
    return responses.json_response(obj, status=201)


def _go_value(value: Any) -> str:
    """How field.Invalid prints a value: strings quoted, a missing struct as null."""
    return f'"{value}"' if isinstance(value, str) else json.dumps(value)


def _validate(ep: Endpoint, obj: dict[str, Any]) -> None:
    spec = obj.get("spec") or {}
    kind = ep.resource.resource
    causes = []
    resource_attrs, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if resource_attrs is not None and non_resource is not None:
        causes.append(errors.field_error("FieldValueInvalid", "spec.nonResourceAttributes",
                                         f"Invalid value: {_go_value(non_resource)}: cannot be specified in "
                                         "combination with resourceAttributes"))
    if resource_attrs is None and non_resource is None:
        causes.append(errors.field_error("FieldValueInvalid", "spec.resourceAttributes",
                                         "Invalid value: null: exactly one of nonResourceAttributes or "
                                         "resourceAttributes must be specified"))
    if kind != "selfsubjectaccessreviews" and not spec.get("user") and not spec.get("groups"):
        causes.append(errors.field_error("FieldValueInvalid", "spec.user",
                                         f"Invalid value: {_go_value(spec.get('user', ''))}: "
                                         "at least one of user or group must be specified"))
    if kind == "localsubjectaccessreviews":
        namespace = (obj.get("metadata") or {}).get("namespace") or ep.request_info.namespace
        if resource_attrs is not None and resource_attrs.get("namespace", "") != namespace:
            causes.append(errors.field_error("FieldValueInvalid", "spec.resourceAttributes.namespace",
                                             f"Invalid value: {_go_value(resource_attrs.get('namespace', ''))}: "
                                             "must match metadata.namespace"))
        if non_resource is not None:
            causes.append(errors.field_error("FieldValueInvalid", "spec.nonResourceAttributes",
                                             f"Invalid value: {_go_value(non_resource)}: disallowed on this kind "
                                             "of request"))
    if causes:
        name = (obj.get("metadata") or {}).get("name", "")
        raise errors.invalid(ep.resource.kind, ep.resource.group, name, causes)


def _subject(spec: dict[str, Any]) -> auth.User:
    return auth.User(spec.get("user", ""), tuple(spec.get("groups") or ()), uid=spec.get("uid", ""),
                     extra=spec.get("extra") or {})


def _attributes(user: auth.User, spec: dict[str, Any]) -> Attributes:
    res = spec.get("resourceAttributes")
    if res is not None:
        return Attributes(user, res.get("verb", ""), True, namespace=res.get("namespace", ""),
                          api_group=res.get("group", ""), api_version=res.get("version", ""),
                          resource=res.get("resource", ""), subresource=res.get("subresource", ""),
                          name=res.get("name", ""))
    non = spec.get("nonResourceAttributes") or {}
    return Attributes(user, non.get("verb", ""), False, path=non.get("path", ""))


def _access_review(ep: Endpoint, obj: dict[str, Any], requester: auth.User) -> web.Response:
    _validate(ep, obj)
    if ep.resource.resource == "localsubjectaccessreviews":
        namespace = ep.request_info.namespace
        if (obj.get("metadata") or {}).get("namespace", namespace) != namespace:
            raise errors.bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
    spec = obj.get("spec") or {}
    user = requester if ep.resource.resource == "selfsubjectaccessreviews" else _subject(spec)
    authorizer: chain.Authorizer = ep.server.extra[chain.AUTHORIZER]
    decision = authorizer.authorize(_attributes(user, spec))
    status: dict[str, Any] = {"allowed": decision.allowed}
    if decision.denied:
        status["denied"] = True
    if decision.reason:
        status["reason"] = decision.reason
    return _answer(ep, obj, status)


def _rules_review(ep: Endpoint, obj: dict[str, Any], requester: auth.User) -> web.Response:
    namespace = (obj.get("spec") or {}).get("namespace", "")
    authorizer: chain.Authorizer = ep.server.extra[chain.AUTHORIZER]
    found = authorizer.rules_for(requester, namespace)
    status: dict[str, Any] = {"resourceRules": found.resource_rules, "nonResourceRules": found.non_resource_rules,
                              "incomplete": found.incomplete}
    if found.evaluation_error:
        status["evaluationError"] = found.evaluation_error
    return _answer(ep, obj, status)


async def create(ep: Endpoint, request: web.Request, user: auth.User) -> web.StreamResponse:
    # A review is answered, never stored, so it has no Table or metadata-only form: kube-apiserver
    # refuses such an Accept before reading the body (no TableConvertor for these scopes).
    if responses.wants(request).form != "object":
        raise errors.not_acceptable(("application/json", "application/yaml", "application/vnd.kubernetes.protobuf"))
    obj = await bodies.read_object(request)
    bodies.check_kind(obj, ep.resource.api_version, ep.resource.kind)
    kind = ep.resource.resource
    if kind in _ACCESS_REVIEWS:
        return _access_review(ep, obj, user)
    if kind == "selfsubjectrulesreviews":
        return _rules_review(ep, obj, user)
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
