"""`Attributes`: what one write looks like to the admission chain (admission.Attributes upstream).

The API server fills one per request (`apiserver/admitting.py`): operation, the resource as
group/version/resource[/subresource] and kind, namespace and name, the object and the old
object as plain dicts, who asks, dryRun and the request's options object. Plugins read it,
mutating plugins change `object` in place, and every plugin may add `warnings` (sent as
`Warning` headers) and `audit_annotations`. The chain that walks the plugins is `chain.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CREATE, UPDATE, DELETE, CONNECT = "CREATE", "UPDATE", "DELETE", "CONNECT"


@dataclass(frozen=True)
class UserInfo:
    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: dict[str, list[str]] = field(default_factory=dict)

    def as_request_field(self) -> dict[str, Any]:
        """`request.userInfo` as the AdmissionRequest carries it."""
        info: dict[str, Any] = {"username": self.username, "groups": list(self.groups)}
        if self.uid:
            info["uid"] = self.uid
        if self.extra:
            info["extra"] = {k: list(v) for k, v in self.extra.items()}
        return info


# Who a request is when the caller does not say: haru's admin (plain HTTP and the admin token).
ADMIN = UserInfo("kubernetes-admin", ("system:masters", "system:authenticated"))


@dataclass
class Reinvocation:
    """Per-request state of the reinvocation pass (admission.ReinvocationContext upstream)."""

    is_reinvoke: bool = False
    should_reinvoke: bool = False
    # Plugin-private state, keyed by plugin name (the MutatingAdmissionPolicy dispatcher keeps its sets here).
    values: dict[str, Any] = field(default_factory=dict)


@dataclass
class Attributes:
    operation: str
    group: str
    version: str
    resource: str
    kind: str
    namespace: str
    name: str
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None = None
    subresource: str = ""
    namespaced: bool = True
    user: UserInfo = ADMIN
    dry_run: bool = False
    options: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)
    reinvocation: Reinvocation = field(default_factory=Reinvocation)
    # Lookups plugins share within this request (the policy plugins keep their converted inputs here).
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def display_name(self) -> str:
        """The name in an error message: the request's, else the object's name or generateName."""
        if self.name:
            return self.name
        meta = (self.object or {}).get("metadata") or {}
        return meta.get("name") or meta.get("generateName") or "Unknown"

    def add_warning(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)
