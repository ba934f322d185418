"""Service-account issuer discovery: `/.well-known/openid-configuration` and `/openid/v1/jwks`.

What kube-apiserver serves (pkg/serviceaccount/openidmetadata.go) so that anyone holding a
service-account token can verify it: the issuer, the JWKS URI (the API server's own address
unless `--service-account-jwks-uri` says otherwise, as upstream defaults it), the response and
subject types, the signing algorithms, and the public key set. Both cacheable for an hour, as
upstream marks them. Served by `app._non_resource`; who may read them is authorization's say.
"""

from __future__ import annotations

import json

from aiohttp import web

from apiserver.authentication import service_account_tokens, signing_key

CONFIGURATION_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/openid/v1/jwks"
PATHS = (CONFIGURATION_PATH, JWKS_PATH)
_CACHE = "public, max-age=3600"


def configuration(tokens: service_account_tokens.Tokens, jwks_uri: str) -> dict[str, object]:
    return {"issuer": tokens.issuer, "jwks_uri": jwks_uri, "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": [signing_key.ALGORITHM]}


def key_set(tokens: service_account_tokens.Tokens) -> dict[str, object]:
    return {"keys": [tokens.key.jwk()]}


def respond(path: str, tokens: service_account_tokens.Tokens, jwks_uri: str) -> web.Response:
    if path == CONFIGURATION_PATH:
        body, content_type = configuration(tokens, jwks_uri), "application/json"
    else:
        body, content_type = key_set(tokens), "application/jwk-set+json"
    return web.Response(body=json.dumps(body, separators=(",", ":")).encode(),
                        headers={"Content-Type": content_type, "Cache-Control": _CACHE})
