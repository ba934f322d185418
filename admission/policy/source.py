"""Where the dispatchers get their policies: the stored ones, compiled once per change, and the static ones.

`PolicySource.refresh()` looks at the four admissionregistration resources only when something in
that group was written since its last look (not on every pod write), and recompiles a policy only when that policy's own
revision changed, so a request costs one cheap listing at most and no compilation. Policies
loaded from manifests (`manifests.py`, KEP-5793) come first and never change. A `Hook` is one
policy with the bindings that name it, bindings by name; policies without bindings do nothing
and are left out. The API server's follower task also calls `refresh()` after each change, so
VAP status (type checking) is written without waiting for a request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import msgspec

from admission.policy.compiled import CompiledPolicy, compile_mutating, compile_validating
from admission.view import ClusterView, StoredObject

GROUP = "admissionregistration.k8s.io"
VALIDATING_POLICIES = "validatingadmissionpolicies"
VALIDATING_BINDINGS = "validatingadmissionpolicybindings"
MUTATING_POLICIES = "mutatingadmissionpolicies"
MUTATING_BINDINGS = "mutatingadmissionpolicybindings"


@dataclass
class Hook:
    policy: CompiledPolicy
    bindings: list[dict[str, Any]] = field(default_factory=list)
    # Rule-matching results per policy (key None) and per binding, for `matching.matches(memo=…)`.
    _memos: dict[int, dict[Any, Any]] = field(default_factory=dict)

    # No paramKind, and no binding narrows the match or names params: every binding then applies
    # wherever the policy does, once, with `params` null (the common case).
    plain_bindings: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.plain_bindings = self.policy.param_kind is None and not any(
            (b.get("spec") or {}).get("matchResources") is not None
            or (b.get("spec") or {}).get("paramRef") is not None for b in self.bindings)

    def memo(self, binding: dict[str, Any] | None) -> dict[Any, Any]:
        return self._memos.setdefault(0 if binding is None else id(binding), {})


@dataclass
class StaticPolicies:
    """Policies and bindings loaded from manifest files; they exist outside the API."""

    validating: list[dict[str, Any]] = field(default_factory=list)
    validating_bindings: list[dict[str, Any]] = field(default_factory=list)
    mutating: list[dict[str, Any]] = field(default_factory=list)
    mutating_bindings: list[dict[str, Any]] = field(default_factory=list)


class _Kind:
    """The stored policies and bindings of one kind (validating or mutating), kept compiled."""

    def __init__(self, policies: str, bindings: str, compile_policy: Callable[..., CompiledPolicy]):
        self.policies_resource = policies
        self.bindings_resource = bindings
        self.compile_policy = compile_policy
        self.policies: dict[str, tuple[int, CompiledPolicy]] = {}
        self.bindings: dict[str, tuple[int, dict[str, Any]]] = {}
        self.static_hooks: list[Hook] = []
        self.hooks: list[Hook] = []

    def load_static(self, policies: list[dict[str, Any]], bindings: list[dict[str, Any]]) -> None:
        compiled = {p["metadata"]["name"]: self.compile_policy(p, static=True) for p in policies}
        self.static_hooks = _hooks(compiled, bindings)
        self.hooks = list(self.static_hooks)

    def refresh(self, listing: dict[str, list[StoredObject]]) -> bool:
        changed = False
        seen: set[str] = set()
        for stored in listing.get(self.policies_resource, []):
            seen.add(stored.name)
            current = self.policies.get(stored.name)
            if current is None or current[0] != stored.revision:
                self.policies[stored.name] = (stored.revision, self.compile_policy(msgspec.json.decode(stored.value)))
                changed = True
        for name in set(self.policies) - seen:
            del self.policies[name]
            changed = True
        seen = set()
        for stored in listing.get(self.bindings_resource, []):
            seen.add(stored.name)
            current_binding = self.bindings.get(stored.name)
            if current_binding is None or current_binding[0] != stored.revision:
                self.bindings[stored.name] = (stored.revision, msgspec.json.decode(stored.value))
                changed = True
        for name in set(self.bindings) - seen:
            del self.bindings[name]
            changed = True
        if changed:
            policies = {name: compiled for name, (_, compiled) in self.policies.items()}
            self.hooks = self.static_hooks + _hooks(policies, [b for _, b in self.bindings.values()])
        return changed


def _hooks(policies: dict[str, CompiledPolicy], bindings: list[dict[str, Any]]) -> list[Hook]:
    by_policy: dict[str, list[dict[str, Any]]] = {}
    for binding in sorted(bindings, key=lambda b: b["metadata"]["name"]):
        by_policy.setdefault((binding.get("spec") or {}).get("policyName", ""), []).append(binding)
    return [Hook(policies[name], by_policy[name]) for name in sorted(policies) if name in by_policy]


class PolicySource:
    def __init__(self, view: ClusterView, static: StaticPolicies | None = None):
        self.view = view
        self._validating = _Kind(VALIDATING_POLICIES, VALIDATING_BINDINGS, compile_validating)
        self._mutating = _Kind(MUTATING_POLICIES, MUTATING_BINDINGS, compile_mutating)
        static = static or StaticPolicies()
        self._validating.load_static(static.validating, static.validating_bindings)
        self._mutating.load_static(static.mutating, static.mutating_bindings)
        self._revision = -1

    def refresh(self) -> bool:
        """Catch up with the store; True when a policy or binding changed."""
        revision = self.view.group_revision(GROUP)
        if revision == self._revision:
            return False
        self._revision = revision
        listing = self.view.list_group(GROUP)
        changed = self._validating.refresh(listing)
        return self._mutating.refresh(listing) or changed

    def validating_hooks(self) -> list[Hook]:
        self.refresh()
        return self._validating.hooks

    def mutating_hooks(self) -> list[Hook]:
        self.refresh()
        return self._mutating.hooks

    def validating_policies(self) -> list[CompiledPolicy]:
        """Every stored ValidatingAdmissionPolicy, bound or not (the status writer type-checks them all)."""
        self.refresh()
        return [compiled for _, compiled in self._validating.policies.values()]
