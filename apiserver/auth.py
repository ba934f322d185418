"""Who is asking: the `User` every later step (authorization, admission's userInfo, audit) reads.

A request's user comes from `authentication/` (client certificate, admin token, token file,
service-account token) or is `system:anonymous` on the public paths; `app.authenticate` sets it.
`User` is the hand-off to authorization: name, groups, uid and extra, as upstream's user.Info.
`ADMIN_USER` is who the kubeconfig's admin token (and, over plain HTTP, everyone) is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ADMIN = "kubernetes-admin"


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...] = ("system:masters", "system:authenticated")
    uid: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"username": self.name, "groups": list(self.groups)}
        if self.uid:
            info["uid"] = self.uid
        if self.extra:
            info["extra"] = self.extra
        return info


ADMIN_USER = User(ADMIN)
