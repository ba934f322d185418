"""TokenReview: whom a bearer token names, answered as kube-apiserver's TokenReview REST does.

The token goes through the token authenticators only (`authentication/chain.py`'s `review`), for
the audiences the review asks for (default: the API server's). The answer says authenticated,
the user, the audiences it holds for, and the authenticator's error. A review without a token is
400 with upstream's text. Nothing is stored. Called by `subresources/reviews.py`.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors
from apiserver.authentication import chain
from apiserver.context import Endpoint


def status(ep: Endpoint, obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec") or {}
    token = spec.get("token") or ""
    if not token:
        raise errors.bad_request("token is required for TokenReview in authentication")
    authenticator: chain.Authenticator = ep.server.extra["authenticator"]
    outcome = authenticator.review(token, spec.get("audiences") or None)
    answer: dict[str, Any] = {"user": {}}  # authenticated: false is omitted, as Go's omitempty does
    if outcome.user is not None:
        answer["authenticated"] = True
        answer["user"] = outcome.user.info()
        answer["audiences"] = outcome.audiences
    if outcome.error:
        answer["error"] = outcome.error
    return answer
