"""The authorizer `--authorization-mode` builds: system:masters first, then each mode in order.

As kube-apiserver's union authorizer: the first mode that allows (or explicitly denies) decides;
a mode with no opinion passes to the next, and the reasons of those that had none are joined for
the 403. Modes: `AlwaysAllow` (haru's old behaviour), `AlwaysDeny`, `Node` (kubelets, `node.py`),
`RBAC`; `Node,RBAC` (kubeadm's) is the default of a server with authentication. The same chain
answers rule listings for SelfSubjectRulesReview. Built by `runner.start`; used by the app's
authorize middleware, impersonation, the escalation check and the review endpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apiserver.authorization.attributes import Attributes
from apiserver.authorization.node import NodeAuthorizer, node_identity
from apiserver.authorization.rbac import RBACAuthorizer
from storage import Store

AUTHORIZER = "authorizer"  # its key in Server.extra
PRIVILEGED_GROUP = "system:masters"
MODES = ("AlwaysAllow", "AlwaysDeny", "Node", "RBAC")
_EVERYTHING_RESOURCE = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
_EVERYTHING_URL = {"verbs": ["*"], "nonResourceURLs": ["*"]}


def default_mode(*, authenticated: bool) -> str:
    """Node,RBAC, as kubeadm sets it; but a server without authentication (plain HTTP: every
    caller is the admin) skips authorization too, as kube-apiserver's old insecure port did, so
    its kubelets' anonymous SubjectAccessReviews keep passing."""
    return "Node,RBAC" if authenticated else "AlwaysAllow"


def parse_modes(text: str) -> tuple[str, ...]:
    """`--authorization-mode` as kube-apiserver validates it (comma-separated, no repeats)."""
    modes = tuple(m.strip() for m in text.split(",") if m.strip())
    if not modes:
        raise ValueError("at least one authorization-mode must be passed")
    for mode in modes:
        if mode in ("Webhook", "ABAC"):
            raise ValueError(f'authorization-mode "{mode}" is valid for kube-apiserver but not served by haru yet')
        if mode not in MODES:
            raise ValueError(f'authorization-mode "{mode}" is not a valid mode')
    if len(set(modes)) != len(modes):
        raise ValueError(f'authorization-mode "{text}" has mode specified more than once')
    return modes


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""
    denied: bool = False  # an explicit deny (no later mode is asked); false for "no opinion"


@dataclass
class Rules:
    """What SelfSubjectRulesReview returns."""
    resource_rules: list[dict[str, Any]] = field(default_factory=list)
    non_resource_rules: list[dict[str, Any]] = field(default_factory=list)
    incomplete: bool = False
    evaluation_error: str = ""


class Authorizer:
    def __init__(self, modes: tuple[str, ...], store: Store) -> None:
        self.modes = modes
        self.rbac = RBACAuthorizer(store) if "RBAC" in modes else None
        self.node = NodeAuthorizer(store) if "Node" in modes else None

    def authorize(self, attrs: Attributes) -> Decision:
        if PRIVILEGED_GROUP in attrs.user.groups:
            return Decision(True)
        reasons = []
        for mode in self.modes:
            if mode == "AlwaysAllow":
                return Decision(True)
            if mode == "AlwaysDeny":
                reasons.append("Everything is forbidden.")
                continue
            judge = self.node if mode == "Node" else self.rbac
            assert judge is not None
            allowed, reason = judge.authorize(attrs)
            if allowed:
                return Decision(True, reason)
            if reason:
                reasons.append(reason)
        return Decision(False, "\n".join(reasons))

    def rules_for(self, user: Any, namespace: str) -> Rules:
        out = Rules()
        errors = []
        if PRIVILEGED_GROUP in user.groups:
            out.resource_rules.append(dict(_EVERYTHING_RESOURCE))
            out.non_resource_rules.append(dict(_EVERYTHING_URL))
        for mode in self.modes:
            if mode == "AlwaysAllow":
                out.resource_rules.append(dict(_EVERYTHING_RESOURCE))
                out.non_resource_rules.append(dict(_EVERYTHING_URL))
            elif mode == "Node" and node_identity(user)[1]:
                # Upstream's: a node's permissions are not enumerable (they follow the graph).
                out.incomplete = True
                errors.append("node authorizer does not support user rule resolution")
            elif mode == "RBAC":
                assert self.rbac is not None
                found, error = self.rbac.rules_for(user, namespace)
                for rule in found:
                    if rule.get("resources"):
                        out.resource_rules.append(_resource_rule(rule))
                    if rule.get("nonResourceURLs"):
                        out.non_resource_rules.append({"verbs": list(rule.get("verbs") or []),
                                                       "nonResourceURLs": list(rule["nonResourceURLs"])})
                if error:
                    errors.append(error)
        out.evaluation_error = "; ".join(errors)
        return out

    def policy_rules(self, user: Any, namespace: str) -> tuple[list[dict[str, Any]], str]:
        """The user's rules as PolicyRules, for the escalation check (system:masters: everything)."""
        if PRIVILEGED_GROUP in user.groups or "AlwaysAllow" in self.modes:
            return [dict(_EVERYTHING_RESOURCE), dict(_EVERYTHING_URL)], ""
        if self.rbac is None:
            return [], ""
        return self.rbac.rules_for(user, namespace)


def _resource_rule(rule: dict[str, Any]) -> dict[str, Any]:
    out = {"verbs": list(rule.get("verbs") or []), "apiGroups": list(rule.get("apiGroups") or []),
           "resources": list(rule.get("resources") or [])}
    if rule.get("resourceNames"):
        out["resourceNames"] = list(rule["resourceNames"])
    return out
