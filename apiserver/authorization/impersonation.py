"""Impersonate-User / -Group / -Uid / -Extra-* headers: act as someone else, if allowed to.

kube's impersonation filter with constrained impersonation (KEP-5284, gate ConstrainedImpersonation).
The wanted user is tried against each mode in upstream's order, and the first that allows wins:
- `associated-node`, `arbitrary-node`, `serviceaccount`, `user-info` (constrained): the requester
  needs `impersonate-on:<mode>:<verb>` on the request itself, then `impersonate:<mode>` on each
  identity field (users, or nodes / serviceaccounts, groups, uids, `userextras/<key>`, all in
  authentication.k8s.io). Node and service-account modes take a bare username only; user-info
  takes anything but those names, and never the empty or system:masters group.
- `legacy`: plain `impersonate` on users, groups and serviceaccounts (core group) and on uids and
  userextras (authentication.k8s.io), whatever the request.
If none allows, the first refusal is the 403. A service account gets its fixed groups, a node
`system:nodes`; everyone but system:anonymous gets system:authenticated. Called by the app's
authenticate middleware after authentication, before the request is authorized.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable
from urllib.parse import unquote

from apiserver import auth, errors
from apiserver.authorization.attributes import Attributes, forbidden

USER = "Impersonate-User"
GROUP = "Impersonate-Group"
UID = "Impersonate-Uid"
EXTRA = "Impersonate-Extra-"
ANONYMOUS = "system:anonymous"
AUTHN = "authentication.k8s.io"
NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name"
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

Authorize = Callable[[Attributes], Any]


@dataclasses.dataclass
class Wanted:
    name: str
    groups: list[str]
    uid: str
    extra: dict[str, list[str]]

    def only_name(self) -> bool:
        return not self.groups and not self.uid and not self.extra


class Refused(Exception):
    def __init__(self, error: errors.APIError) -> None:
        super().__init__(error.message)
        self.error = error


def requested(headers: Any) -> bool:
    return any(k.lower().startswith("impersonate-") for k in headers.keys())


def _service_account(username: str) -> tuple[str, str] | None:
    parts = username.split(":")
    if len(parts) == 4 and parts[0] == "system" and parts[1] == "serviceaccount" and parts[2] and parts[3]:
        return parts[2], parts[3]
    return None


def _node(username: str) -> str | None:
    name = username[len("system:node:"):] if username.startswith("system:node:") else ""
    return name if name and len(name) <= 253 and _SUBDOMAIN.match(name) else None


def _wanted(headers: Any) -> Wanted:
    extra: dict[str, list[str]] = {}
    for key in dict.fromkeys(headers.keys()):
        if key.lower().startswith(EXTRA.lower()):
            # Extra keys are percent-encoded in header names and lower-cased, as client-go writes them.
            extra.setdefault(unquote(key[len(EXTRA):]).lower(), []).extend(headers.getall(key))
    wanted = Wanted(headers.get(USER, ""), list(headers.getall(GROUP, [])), headers.get(UID, ""), extra)
    if not wanted.name and (wanted.groups or wanted.uid or wanted.extra):
        raise errors.bad_request("requested impersonation of groups, extra or uid without impersonating a user")
    return wanted


def _check(authorize: Authorize, attrs: Attributes, reason_if_denied: str = "") -> None:
    decision = authorize(attrs)
    if not decision.allowed:
        raise Refused(forbidden(attrs, reason_if_denied or decision.reason))


def _identity(authorize: Authorize, requester: auth.User, wanted: Wanted, verb: str, constrained: bool) -> auth.User:
    """The identity checks of one mode (`impersonate` or `impersonate:<mode>`); the user they allow."""
    group = AUTHN if constrained else ""
    version = "v1"

    def attrs(resource: str, name: str, namespace: str = "", subresource: str = "", api_group: str = group) -> Attributes:
        return Attributes(requester, verb, True, namespace=namespace, api_group=api_group, api_version=version,
                          resource=resource, subresource=subresource, name=name)

    groups = list(wanted.groups)
    node = _node(wanted.name) if constrained else None
    account = _service_account(wanted.name)
    if node is not None:
        check = attrs("nodes", "*" if verb == "impersonate:associated-node" else node)
        groups = ["system:nodes"]
    elif account is not None:
        check = attrs("serviceaccounts", account[1], namespace=account[0])
        if not wanted.groups:
            groups = ["system:serviceaccounts", f"system:serviceaccounts:{account[0]}"]
    else:
        check = attrs("users", wanted.name)
    _check(authorize, check)
    if wanted.uid:
        _check(authorize, attrs("uids", wanted.uid, api_group=AUTHN))
    if constrained and "" in wanted.groups:
        raise Refused(forbidden(attrs("groups", ""), "impersonating the empty string group is not allowed"))
    if constrained and "system:masters" in wanted.groups:
        raise Refused(forbidden(attrs("groups", "system:masters"), "impersonating the system:masters group is not allowed"))
    for name in wanted.groups:
        _check(authorize, attrs("groups", name))
    for key, values in wanted.extra.items():
        for value in values:
            _check(authorize, attrs("userextras", value, subresource=key, api_group=AUTHN))
    if wanted.name == ANONYMOUS:
        if "system:unauthenticated" not in groups:
            groups.append("system:unauthenticated")
    elif "system:unauthenticated" not in groups and "system:authenticated" not in groups:
        groups.append("system:authenticated")
    return auth.User(wanted.name, tuple(groups), uid=wanted.uid, extra=wanted.extra)


def _applies(mode: str, wanted: Wanted, requester: auth.User) -> bool:
    """Each constrained mode's filter: does it even apply to this wanted user?"""
    node, account = _node(wanted.name), _service_account(wanted.name)
    if mode == "associated-node":
        extra = (requester.extra or {}).get(NODE_NAME_EXTRA) or []
        return (wanted.only_name() and node is not None and _service_account(requester.name) is not None
                and len(extra) == 1 and extra[0] == node)
    if mode == "arbitrary-node":
        return wanted.only_name() and node is not None
    if mode == "serviceaccount":
        return wanted.only_name() and account is not None
    return node is None and account is None  # user-info


CONSTRAINED_MODES = ("associated-node", "arbitrary-node", "serviceaccount", "user-info")


def impersonate(requester: auth.User, headers: Any, authorize: Authorize, request: Attributes,
                constrained: bool = True) -> auth.User:
    """The user the request acts as; raises the 403 (or 400) kube-apiserver answers.

    `request` is the request's own attributes with the requester as user, for `impersonate-on`."""
    wanted = _wanted(headers)
    first: Refused | None = None
    modes = CONSTRAINED_MODES if constrained else ()
    for mode in modes:
        if not _applies(mode, wanted, requester):
            continue
        try:
            _check(authorize, dataclasses.replace(request, user=requester, verb=f"impersonate-on:{mode}:{request.verb}"))
            return _identity(authorize, requester, wanted, f"impersonate:{mode}", True)
        except Refused as refused:
            first = first or refused
    try:
        return _identity(authorize, requester, wanted, "impersonate", False)
    except Refused as refused:
        raise (first or refused).error from None
