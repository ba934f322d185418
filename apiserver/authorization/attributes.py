"""What an authorizer judges: who, which verb, on which resource or path; and the 403 it earns.

Built from the parsed request (`requestinfo.RequestInfo`) by the app's authorize middleware, and
from a SubjectAccessReview's spec by `subresources/reviews.py`. `forbidden()` is kube-apiserver's
responsewriters.ForbiddenStatusError: `User "x" cannot list resource "pods" in API group "" in
the namespace "y"`, with the authorizers' reason appended after a colon when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apiserver import errors


@dataclass(frozen=True)
class Attributes:
    user: Any  # an auth.User
    verb: str
    is_resource: bool
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""
    field_selector: str = ""  # a LIST's or WATCH's, for the Node authorizer's spec.nodeName scoping


def _exact_name(field_selector: str) -> str:
    """The name a `metadata.name=x` (or `==`) term pins a LIST or WATCH to; "" if none."""
    for term in field_selector.split(","):
        field, sep, value = term.partition("==") if "==" in term else term.partition("=")
        # `metadata.name!=x` leaves "metadata.name!" as the field; a path-unsafe name pins nothing.
        if sep and field.strip() == "metadata.name" and value and "/" not in value and value not in (".", ".."):
            return value.strip()
    return ""


def from_request(user: Any, info: Any, field_selector: str = "") -> Attributes:
    """The attributes of a request, as kube's WithRequestInfo + GetAuthorizerAttributes build them.

    A LIST or WATCH whose field selector pins metadata.name is about that name, so a rule with
    resourceNames can allow `kubectl get cm x -w` (upstream's RequestInfoFactory does the same)."""
    if not info.is_resource:
        return Attributes(user, info.verb, False, path=info.path)
    name = info.name
    if not name and info.verb in ("list", "watch") and field_selector:
        name = _exact_name(field_selector)
    namespace = info.namespace
    resource = info.resource
    # /api/v1/namespaces/{name}: the namespace object itself is the name, not the namespace scope.
    if resource == "namespaces" and not name and namespace:
        resource, name, namespace = "namespaces", namespace, namespace
    return Attributes(user, info.verb, True, namespace=namespace, api_group=info.group, api_version=info.version,
                      resource=resource, subresource=info.subresource, name=name, path=info.path,
                      field_selector=field_selector if info.verb in ("list", "watch") else "")


def describe(attrs: Attributes) -> str:
    """kube's forbiddenMessage."""
    who = attrs.user.name if attrs.user is not None else ""
    if not attrs.is_resource:
        return f'User "{who}" cannot {attrs.verb} path "{attrs.path}"'
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if attrs.namespace:
        return (f'User "{who}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" '
                f'in the namespace "{attrs.namespace}"')
    return f'User "{who}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" at the cluster scope'


def forbidden(attrs: Attributes, reason: str) -> errors.APIError:
    why = describe(attrs)
    if reason:
        why = f"{why}: {reason}"
    if not attrs.is_resource:
        return errors.APIError(403, "Forbidden", f"forbidden: {why}", {})
    qualified = errors.qualified(attrs.resource, attrs.api_group)
    details: dict[str, Any] = {}
    if attrs.name:
        details["name"] = attrs.name
    if attrs.api_group:
        details["group"] = attrs.api_group
    details["kind"] = attrs.resource
    if attrs.name:
        return errors.APIError(403, "Forbidden", f'{qualified} "{attrs.name}" is forbidden: {why}', details)
    return errors.APIError(403, "Forbidden", f"{qualified} is forbidden: {why}", details)
