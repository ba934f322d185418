"""`serviceaccounts/<name>/token`: a TokenRequest answered with a signed token (`kubectl create token`).

As kube-apiserver's TokenREST: spec.expirationSeconds defaults to an hour and must lie between
10 minutes and 2^32 seconds; audiences default to the API server's; a boundObjectRef names a Pod
(which must run as this account; its node is recorded too), a Secret or a Node of the cluster, and
a uid in it must match the stored one. A pod-bound token asked for the kubelet's 3607 seconds
lives a year and warns after the hour. The admission chain sees the TokenRequest first. The token
comes from `authentication/service_account_tokens`.
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from admission import attributes as admission_attributes
from apiserver import admitting, bodies, errors, responses
from apiserver.authentication import chain, service_account_tokens as sa_tokens
from apiserver.context import Endpoint

_MIN_SECONDS = 600
_MAX_SECONDS = 1 << 32


def _stamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


async def create(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    request_obj = await bodies.read_object(request)
    name = ep.request_info.name
    namespace = ep.request_info.namespace
    account = responses.decode(ep.stored(name).value)
    spec = request_obj.setdefault("spec", {}) or {}
    request_obj["spec"] = spec
    seconds = spec.get("expirationSeconds") or 3600
    _validate(name, seconds)
    # Admission sees the TokenRequest, as upstream's create of serviceaccounts/token (NodeRestriction:
    # a kubelet's token must be bound to a pod on its node).
    attrs = admitting.attributes(ep, admission_attributes.CREATE, request_obj, None, request.query,
                                 subresource="token", user=ep.user, name=name)
    admitting.admit(ep, attrs)
    admitting.validate(ep, attrs)
    request_obj = attrs.object if attrs.object is not None else request_obj
    spec = request_obj.setdefault("spec", {}) or {}
    authenticator: chain.Authenticator = ep.server.extra["authenticator"]
    tokens = authenticator.tokens
    audiences = spec.get("audiences") or list(tokens.api_audiences)
    spec.update({"expirationSeconds": seconds, "audiences": audiences})
    bound = _bound(ep, authenticator, name, namespace, spec.get("boundObjectRef"))
    lifetime, warn_after = seconds, 0
    if bound.pod is not None and seconds == sa_tokens.WARN_ONLY_SECONDS and set(audiences) <= set(tokens.api_audiences):
        lifetime, warn_after = sa_tokens.EXTENDED_SECONDS, seconds
    token, claims = tokens.issue(namespace, name, account["metadata"].get("uid", ""), lifetime, audiences,
                                 bound, warn_after)
    request_obj["apiVersion"] = "authentication.k8s.io/v1"
    request_obj["kind"] = "TokenRequest"
    meta = request_obj.setdefault("metadata", {})
    meta.update({"name": name, "namespace": namespace, "creationTimestamp": _stamp(claims["iat"])})
    # The answer's expiry is the one asked for, even when the token itself was extended.
    request_obj["status"] = {"token": token, "expirationTimestamp": _stamp(claims["iat"] + seconds)}
    return responses.json_response(request_obj, status=201)


def _validate(name: str, seconds: Any) -> None:
    if not isinstance(seconds, int) or seconds < _MIN_SECONDS:
        why = "may not specify a duration less than 10 minutes"
    elif seconds > _MAX_SECONDS:
        why = "may not specify a duration larger than 2^32 seconds"
    else:
        return
    cause = errors.field_error("FieldValueInvalid", "spec.expirationSeconds", f"Invalid value: {seconds}: {why}")
    raise errors.invalid("TokenRequest", "authentication.k8s.io", name, [cause])


def _bound(ep: Endpoint, authenticator: chain.Authenticator, account: str, namespace: str,
           ref: dict[str, Any] | None) -> sa_tokens.Bound:
    if not ref:
        return sa_tokens.Bound()
    api_version, kind, target = ref.get("apiVersion") or "", ref.get("kind") or "", ref.get("name") or ""
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    lookup = authenticator.lookup
    if group == "" and kind == "Pod":
        obj = lookup("pods", namespace, target)
        if obj is None:
            raise errors.not_found("pods", "", target)
        if (obj.get("spec") or {}).get("serviceAccountName") != account:
            raise errors.bad_request(f'cannot bind token for serviceaccount "{account}" to pod running with '
                                     f'different serviceaccount name.')
        node_name = (obj.get("spec") or {}).get("nodeName") or ""
        node = lookup("nodes", "", node_name) if node_name else None
        bound = sa_tokens.Bound(pod=_ref(obj),
                                node=sa_tokens.Ref(node_name, _uid(node)) if node_name else None)
    elif group == "" and kind == "Node":
        obj = lookup("nodes", "", target)
        if obj is None:
            raise errors.not_found("nodes", "", target)
        bound = sa_tokens.Bound(node=_ref(obj))
    elif group == "" and kind == "Secret":
        obj = lookup("secrets", namespace, target)
        if obj is None:
            raise errors.not_found("secrets", "", target)
        bound = sa_tokens.Bound(secret=_ref(obj))
    else:
        raise errors.bad_request(f"cannot bind token to object of type {_gvk_string(api_version, kind)}")
    if ref.get("uid") and ref["uid"] != _uid(obj):
        raise errors.conflict(kind, group, target, f"the UID in the bound object reference ({ref['uid']}) does not "
                                                   "match the UID in record. The object might have been deleted and "
                                                   "then recreated")
    return bound


def _uid(obj: dict[str, Any] | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("uid", ""))


def _ref(obj: dict[str, Any]) -> sa_tokens.Ref:
    return sa_tokens.Ref(obj["metadata"]["name"], _uid(obj))


def _gvk_string(api_version: str, kind: str) -> str:
    """schema.GroupVersionKind.String(): "group/version, Kind=kind"."""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"
