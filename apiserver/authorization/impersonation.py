"""Impersonate-User / -Group / -Uid / -Extra-* headers: act as someone else, if allowed to.

kube's WithImpersonation filter: every header becomes one `impersonate` check against the real
requester (users, groups and serviceaccounts in the core group; uids and `userextras/<key>` in
authentication.k8s.io), and any refusal is the usual 403 for that check. A service-account
username (`system:serviceaccount:ns:name`) is checked as the serviceaccount object and, with no
groups asked for, gets the service-account groups. The result always carries
system:authenticated (system:unauthenticated for system:anonymous). Called by the app's
authenticate middleware after authentication, before the request is authorized.
"""

from __future__ import annotations

from typing import Any, Callable
from urllib.parse import unquote

from apiserver import auth, errors
from apiserver.authorization.attributes import Attributes, forbidden

USER = "Impersonate-User"
GROUP = "Impersonate-Group"
UID = "Impersonate-Uid"
EXTRA = "Impersonate-Extra-"
ANONYMOUS = "system:anonymous"


def _service_account(username: str) -> tuple[str, str] | None:
    parts = username.split(":")
    if len(parts) == 4 and parts[0] == "system" and parts[1] == "serviceaccount" and parts[2] and parts[3]:
        return parts[2], parts[3]
    return None


def requested(headers: Any) -> bool:
    return any(k.lower().startswith("impersonate-") for k in headers.keys())


def impersonate(requester: auth.User, headers: Any, authorize: Callable[[Attributes], Any]) -> auth.User:
    """The user the request acts as; raises the 403 or 400 kube-apiserver answers."""
    username = headers.get(USER, "")
    asked_groups = list(headers.getall(GROUP, []))  # a CIMultiDict: the header may repeat
    groups = list(asked_groups)
    uid = headers.get(UID, "")
    extra: dict[str, list[str]] = {}
    for key in dict.fromkeys(headers.keys()):
        if key.lower().startswith(EXTRA.lower()):
            # Extra keys are percent-encoded in header names and lower-cased, as client-go writes them.
            name = unquote(key[len(EXTRA):]).lower()
            extra.setdefault(name, []).extend(headers.getall(key))
    if not username and (groups or uid or extra):
        raise errors.bad_request("requested impersonation of groups, extra or uid without impersonating a user")
    checks: list[Attributes] = []
    account = _service_account(username)
    if account is not None:
        namespace, name = account
        checks.append(Attributes(requester, "impersonate", True, namespace=namespace, api_group="",
                                 api_version="v1", resource="serviceaccounts", name=name))
        if not groups:
            groups = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    else:
        checks.append(Attributes(requester, "impersonate", True, api_group="", api_version="v1",
                                 resource="users", name=username))
    for group in asked_groups:
        checks.append(Attributes(requester, "impersonate", True, api_group="", api_version="v1",
                                 resource="groups", name=group))
    for key, values in extra.items():
        for value in values:
            checks.append(Attributes(requester, "impersonate", True, api_group="authentication.k8s.io",
                                     api_version="v1", resource="userextras", subresource=key, name=value))
    if uid:
        checks.append(Attributes(requester, "impersonate", True, api_group="authentication.k8s.io",
                                 api_version="v1", resource="uids", name=uid))
    for attrs in checks:
        decision = authorize(attrs)
        if not decision.allowed:
            raise forbidden(attrs, decision.reason)
    if username != ANONYMOUS:
        if "system:authenticated" not in groups:
            groups.append("system:authenticated")
    elif "system:unauthenticated" not in groups:
        groups.append("system:unauthenticated")
    return auth.User(username, tuple(groups), uid=uid, extra=extra)
