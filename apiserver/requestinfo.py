"""What a request is about: parsed from its path, method and query, before anything else runs.

Mirrors kube-apiserver's RequestInfoFactory: `/api/v1/namespaces/ns/pods/p/status` becomes
(verb=get, group="", version=v1, namespace=ns, resource=pods, name=p, subresource=status).
Called once per request by `app.py`; the handlers read the result and never parse paths themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from apiserver import query_flags

# Subresources of the namespace object itself; anything else after /namespaces/{ns}/ is a resource.
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass(frozen=True)
class RequestInfo:
    is_resource: bool
    verb: str = ""
    path: str = ""
    group: str = ""
    version: str = ""
    namespace: str = ""
    resource: str = ""
    name: str = ""
    subresource: str = ""
    # Anything after the subresource (pods/p/proxy/<rest>).
    rest: tuple[str, ...] = ()


def parse(method: str, path: str, query: dict[str, str] | None = None) -> RequestInfo:
    query = query or {}
    parts = [p for p in path.split("/") if p]
    if not parts or parts[0] not in ("api", "apis"):
        return RequestInfo(is_resource=False, verb=method.lower(), path=path)
    if parts[0] == "api":
        if len(parts) < 2:
            return RequestInfo(is_resource=False, verb=method.lower(), path=path)
        group, version, rest = "", parts[1], parts[2:]
    else:
        if len(parts) < 3:
            return RequestInfo(is_resource=False, verb=method.lower(), path=path, group=parts[1] if len(parts) > 1 else "")
        group, version, rest = parts[1], parts[2], parts[3:]
    if not rest:
        return RequestInfo(is_resource=False, verb=method.lower(), path=path, group=group, version=version)

    legacy_watch = rest[0] == "watch"
    if legacy_watch:
        rest = rest[1:]
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    extra = tuple(rest[3:])

    verb = _verb(method, bool(name), legacy_watch or query_flags.enabled(query, "watch"))
    return RequestInfo(
        is_resource=True,
        verb=verb,
        path=path,
        group=group,
        version=version,
        namespace=namespace,
        resource=resource,
        name=name,
        subresource=subresource,
        rest=extra,
    )


def _verb(method: str, has_name: bool, watch: bool) -> str:
    method = method.upper()
    if method in ("GET", "HEAD"):
        if watch:
            return "watch"
        return "get" if has_name else "list"
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if has_name else "deletecollection"
    return method.lower()
