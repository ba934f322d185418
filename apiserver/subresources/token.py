"""`serviceaccounts/<name>/token`: a TokenRequest answered with a signed token (`kubectl create token`).

The token is issued by `auth.Authenticator` and authenticates as the service account over HTTPS.
Expiry follows spec.expirationSeconds (default 1 hour, at least 10 minutes, as kube enforces).
"""

from __future__ import annotations

import time

from aiohttp import web

from apiserver import auth, bodies, errors, responses
from apiserver.context import Endpoint

_MIN_SECONDS = 600


async def create(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    request_obj = await bodies.read_object(request)
    name = ep.request_info.name
    account = responses.decode(ep.stored(name).value)
    spec = request_obj.setdefault("spec", {})
    seconds = spec.get("expirationSeconds") or 3600
    if seconds < _MIN_SECONDS:
        cause = errors.field_error("FieldValueInvalid", "spec.expirationSeconds",
                                   f"Invalid value: {seconds}: may not specify a duration less than 10 minutes")
        raise errors.invalid("TokenRequest", "authentication.k8s.io", name, [cause])
    spec["expirationSeconds"] = seconds
    audiences = spec.get("audiences") or ["https://kubernetes.default.svc.cluster.local"]
    spec["audiences"] = audiences
    authenticator: auth.Authenticator = ep.server.extra["authenticator"]
    token, expiry = authenticator.issue(ep.request_info.namespace, name, account["metadata"].get("uid", ""),
                                        seconds, audiences)
    request_obj["apiVersion"] = "authentication.k8s.io/v1"
    request_obj["kind"] = "TokenRequest"
    meta = request_obj.setdefault("metadata", {})
    meta.update({"name": name, "namespace": ep.request_info.namespace,
                 "creationTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    request_obj["status"] = {"token": token,
                             "expirationTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expiry))}
    return responses.json_response(request_obj, status=201)
