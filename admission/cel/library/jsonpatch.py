"""Kubernetes `jsonpatch` library: `jsonpatch.escapeKey()` (RFC 6901 escaping of one path key).

Used by MutatingAdmissionPolicy JSONPatch mutations to build paths such as
`"/metadata/labels/" + jsonpatch.escapeKey("k8s.io/x")`. Registered by `admission.cel.library`.
"""

from __future__ import annotations

from cel_expr_python import cel

from admission.cel.library import spec


def escape_key(key: str) -> str:
    # "~" first, so the "~" that "/" turns into is not escaped again.
    return key.replace("~", "~0").replace("/", "~1")


OVERLOADS = [
    ("jsonpatch.escapeKey", spec.overload(
        "string_jsonpatch_escapeKey_string", cel.Type.STRING, [cel.Type.STRING],
        impl=escape_key)),
]
