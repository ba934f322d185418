"""The MutatingAdmissionPolicy plugin: match, collect params, apply each mutation in order.

Per matching (policy, binding, param): matchConditions, then every mutation — an
ApplyConfiguration merged with server-side-apply rules (after refusing atomic lists, maps and
structs, as upstream does) or a JSONPatch (a failing `test` op leaves the object unchanged) —
each seeing the object the previous one produced. Errors are collected as upstream's
PolicyErrors ("policy 'p' with binding 'b' denied request: …"); under failurePolicy Fail the
first one refuses the request with 403 (reason Invalid for evaluation and patch errors).
Reinvocation follows upstream's policyReinvokeContext. Upstream: policy/mutating/dispatcher.go.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from admission import errors
from admission.attributes import CREATE, CONNECT, UPDATE, Attributes
from admission.policy import matching, params as params_module
from admission.policy.compiled import APPLY_CONFIGURATION, IGNORE, CompiledPolicy, Mutation
from admission.policy.evaluation import Invocation, InvocationError, versioned
from admission.policy.source import PolicySource
from admission.policy.validating import Request, _match_conditions
from admission.view import ClusterView

PLUGIN = "MutatingAdmissionPolicy"
_OPERATIONS = (CREATE, UPDATE, CONNECT)


def _copy(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


@dataclass
class PolicyError:
    policy: CompiledPolicy
    binding: dict[str, Any] | None
    message: str
    reason: str = ""

    def text(self) -> str:
        if self.binding is not None:
            name = (self.binding.get("metadata") or {}).get("name", "")
            return f"policy '{self.policy.name}' with binding '{name}' denied request: {self.message}"
        return f'policy "{self.policy.name}" denied request: {self.message}'


@dataclass
class _ReinvokeState:
    """policyReinvokeContext: which invocations may run again, and the object they last produced."""

    last_output: Any = None
    previously_invoked: set[tuple[str, str, str]] = field(default_factory=set)
    reinvoke: set[tuple[str, str, str]] = field(default_factory=set)

    def require_reinvoking_previous(self) -> None:
        self.reinvoke |= self.previously_invoked
        self.previously_invoked = set()


def find_atomics(value: Any, schema: dict[str, Any] | None, view: ClusterView, path: str = "") -> list[str]:
    """Paths in an apply configuration that set atomic lists, maps or structs (upstream's validatePatch).
    Scalars set nothing atomic: only maps and lists are looked into."""
    if schema is None:
        return []
    node = view.resolve(schema)
    found: list[str] = []
    if isinstance(value, dict):
        properties = node.get("properties")
        if node.get("x-kubernetes-map-type") == "atomic" or schema.get("x-kubernetes-map-type") == "atomic":
            found.append(path)
        if isinstance(properties, dict):
            for key, item in value.items():
                if key in properties and isinstance(item, (dict, list)):
                    found += find_atomics(item, properties[key], view, f"{path}.{key}")
    elif isinstance(value, list):
        list_type = node.get("x-kubernetes-list-type") or schema.get("x-kubernetes-list-type")
        if list_type is None:
            # kube-openapi: a list with a merge strategy is a map (merge key) or a set; otherwise atomic.
            strategy = node.get("x-kubernetes-patch-strategy") or schema.get("x-kubernetes-patch-strategy") or ""
            list_type = "map" if "merge" in strategy and (node.get("x-kubernetes-patch-merge-key")
                                                          or schema.get("x-kubernetes-patch-merge-key")) \
                else ("set" if "merge" in strategy else "atomic")
        if list_type == "atomic":
            found.append(path)
        items = node.get("items")
        for index, item in enumerate(value):
            if isinstance(item, (dict, list)):
                found += find_atomics(item, items if isinstance(items, dict) else None, view, f"{path}[{index}]")
    return found


class MutatingPolicyPlugin:
    name = PLUGIN

    def __init__(self, source: PolicySource, view: ClusterView):
        self.source = source
        self.view = view

    def admit(self, attrs: Attributes) -> None:
        if attrs.operation not in _OPERATIONS or attrs.object is None:
            return
        hooks = self.source.mutating_hooks()
        if not hooks:
            return
        state: _ReinvokeState = attrs.reinvocation.values.setdefault(PLUGIN, _ReinvokeState())
        reinvoking = attrs.reinvocation.is_reinvoke
        if reinvoking:
            if state.last_output is not None and state.last_output != attrs.object:
                state.require_reinvoking_previous()
            if not state.reinvoke:
                return  # nothing may run again: no IfNeeded policy saw an older object
        request = Request(attrs, self.view)
        problems: list[PolicyError] = []
        for hook in hooks:
            policy = hook.policy
            if matching.is_exempt(attrs) and not policy.static:
                continue
            matched = matching.matches(policy.match_constraints, attrs, request.namespace_labels, self.view,
                                       is_binding=False, memo=hook.memo(None))
            if matched is None:
                continue
            if hook.plain_bindings:
                for binding in hook.bindings:
                    self._invoke(policy, binding, None, matched, request, state, reinvoking, problems)
                continue
            for binding, found, error in params_module.bound(hook, attrs, request.namespace_labels, self.view):
                if error is not None:
                    problems.append(PolicyError(policy, binding, f"failed to configure binding: {error}"))
                for param in found:
                    self._invoke(policy, binding, param, matched, request, state, reinvoking, problems)
        # Later plugins may change the object in place: keep what this pass produced, to compare.
        state.last_output = _copy(attrs.object) if state.previously_invoked else None
        self._raise_failures(attrs, problems)

    def _invoke(self, policy: CompiledPolicy, binding: dict[str, Any], param: dict[str, Any] | None,
                matched: matching.Matched, request: Request, state: _ReinvokeState, reinvoking: bool,
                problems: list[PolicyError]) -> None:
        attrs = request.attrs
        key = (policy.name, (binding.get("metadata") or {}).get("name", ""),
               "" if param is None else f"{(param.get('metadata') or {}).get('namespace', '')}/"
                                         f"{(param.get('metadata') or {}).get('name', '')}")
        if reinvoking and key not in state.reinvoke:
            return
        invocation = request.invocation(policy, matched, param)
        applies, error = _match_conditions(policy, invocation)
        if error is not None:
            problems.append(PolicyError(policy, binding, error, "Invalid"))
            return
        if not applies:
            return
        # Mutations build new dicts (patches copy), so the object before them stays as it was.
        before = attrs.object
        for mutation in policy.mutations:
            try:
                patched = self._apply(mutation, invocation, matched, attrs)
            except (InvocationError, errors.PatchFailed) as err:
                problems.append(PolicyError(policy, binding, err.message, "Invalid"))
                continue
            attrs.object = patched
            invocation.replace_object(versioned(patched, matched, attrs))
        if attrs.object is not before and attrs.object != before:
            state.require_reinvoking_previous()
            attrs.reinvocation.should_reinvoke = True
        if policy.reinvocation_policy == "IfNeeded":
            state.previously_invoked.add(key)

    def _apply(self, mutation: Mutation, invocation: Invocation, matched: matching.Matched,
               attrs: Attributes) -> dict[str, Any]:
        expression = mutation.expression
        if expression is None:
            raise InvocationError(f"mutation of type {mutation.patch_type} has no expression")
        result = invocation.evaluate(expression)
        current = versioned(attrs.object, matched, attrs) or {}
        if mutation.patch_type == APPLY_CONFIGURATION:
            if not isinstance(result, dict):
                raise InvocationError(f"unsupported return type from ApplyConfiguration expression: {type(result).__name__}")
            patched = self._apply_configuration(current, result, matched)
        else:
            patched = self._json_patch(current, result)
        # Back to the request's version (haru's versions differ only in apiVersion).
        if matched.version != attrs.version and isinstance(patched, dict):
            patched = {**patched, "apiVersion": attrs.api_version}
        return patched

    def _apply_configuration(self, current: dict[str, Any], config: dict[str, Any],
                             matched: matching.Matched) -> dict[str, Any]:
        config = {**config, "apiVersion": current.get("apiVersion", ""), "kind": current.get("kind", "")}
        schema = self.view.schema(matched.group, matched.version, matched.kind)
        atomics = find_atomics(config, schema, self.view)
        if atomics:
            raise errors.PatchFailed("error applying patch: invalid ApplyConfiguration: may not mutate atomic "
                                     f"arrays, maps or structs: {', '.join(atomics)}")
        try:
            return self.view.apply(current, config, schema)
        except errors.PatchFailed as err:
            raise errors.PatchFailed(f"error applying patch: failed to merge patch: {err.message}") from None

    def _json_patch(self, current: dict[str, Any], operations: Any) -> dict[str, Any]:
        if not isinstance(operations, list):
            raise InvocationError("type mismatch: JSONPatchType.expression should evaluate to array")
        clean = []
        for op in operations:
            if not isinstance(op, dict):
                raise InvocationError("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch")
            entry = {"op": op.get("op", ""), "path": op.get("path", "")}
            if op.get("from"):
                entry["from"] = op["from"]
            if "value" in op:
                entry["value"] = op["value"]
            clean.append(entry)
        try:
            patched = self.view.json_patch(current, clean)
        except errors.PatchFailed as err:
            if err.message.startswith("testing value"):
                return current  # a failing test operation means: do not apply the patch
            raise errors.PatchFailed(f"JSONPath: {err.message}") from None
        if not isinstance(patched, dict):
            raise errors.PatchFailed("JSONPath: the patched document is not an object")
        return patched

    @staticmethod
    def _raise_failures(attrs: Attributes, problems: list[PolicyError]) -> None:
        failing = [p for p in problems if p.policy.failure_policy != IGNORE]
        if not failing:
            return
        first = failing[0]
        details = errors.details_for(attrs)
        details["causes"] = [{"message": p.text()} for p in failing]
        raise errors.Rejection(403, first.reason or "Forbidden", first.text(), details)
