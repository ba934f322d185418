"""The ValidatingAdmissionPolicy plugin: match, collect params, evaluate, act on the binding's actions.

For each policy (manifest policies first, then API policies, by name) that matches the request,
and each of its bindings that matches: params are collected, matchConditions decide, then every
validation runs. A false (or, under failurePolicy Fail, erroring) validation is handled per
binding action: Deny refuses the request with the first denial — `<resource> "<name>" is
forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>' denied request: <message>`, code
and reason from the validation's reason (default 422 Invalid) —, Warn adds a `Warning`, Audit an
audit annotation. Upstream: admission/plugin/policy/validating/{dispatcher,validator}.go.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from admission import errors
from admission.attributes import Attributes
from admission.policy import matching, params as params_module
from admission.policy.compiled import FAIL, IGNORE, CompiledPolicy
from admission.policy.evaluation import Invocation, InvocationError, Shared, namespace_object, versioned
from admission.policy.source import Hook, PolicySource
from admission.view import ClusterView

_REASON_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}
_MAX_MESSAGE = 5 * 1024
_MAX_AUDIT_VALUE = 10 * 1024
VALIDATION_FAILURE_ANNOTATION = "validation.policy.admission.k8s.io/validation_failure"


@dataclass
class Denial:
    policy: str
    binding: str | None
    message: str
    reason: str = ""


class _Lookups:
    """What the policy plugins read once per request: kept in `Attributes.memo`, without a reference
    back to the Attributes (no cycle, so a request's garbage goes as soon as the request does)."""

    def __init__(self, attrs: Attributes, view: ClusterView):
        self.shared = Shared(attrs.user)
        self.namespace: dict[str, Any] | None = None
        self._namespace_object: dict[str, Any] | None = None
        name = attrs.namespace
        if name and not (attrs.group == "" and attrs.resource == "namespaces"):
            self.namespace = view.get("", "namespaces", "", name)

    def namespace_object(self) -> dict[str, Any] | None:
        """The `namespaceObject` variable, built when a policy first reads it."""
        if self._namespace_object is None and self.namespace is not None:
            self._namespace_object = namespace_object(self.namespace)
        return self._namespace_object


class Request:
    """One plugin's view of one request: the attributes, and the lookups both policy plugins share."""

    def __init__(self, attrs: Attributes, view: ClusterView):
        self.attrs = attrs
        self.view = view
        self._lookups: _Lookups | None = attrs.memo.get("policy-lookups")

    @property
    def lookups(self) -> _Lookups:
        if self._lookups is None:
            self._lookups = self.attrs.memo["policy-lookups"] = _Lookups(self.attrs, self.view)
        return self._lookups

    def namespace(self) -> dict[str, Any] | None:
        return self.lookups.namespace

    def namespace_labels(self) -> dict[str, str] | None:
        namespace = self.lookups.namespace
        return None if namespace is None else (namespace.get("metadata") or {}).get("labels") or {}

    def invocation(self, policy: CompiledPolicy, matched: matching.Matched,
                   param: dict[str, Any] | None) -> Invocation:
        attrs = self.attrs
        return Invocation(self.lookups.shared, attrs, matched, obj=versioned(attrs.object, matched, attrs),
                          old=versioned(attrs.old_object, matched, attrs), params=param,
                          namespace=self.lookups.namespace_object, variables=policy.variables,
                          reads=policy.reads)


def _configuration_failure(policy: CompiledPolicy, binding: dict[str, Any] | None, why: str) -> Denial | None:
    if policy.failure_policy == IGNORE:
        return None
    if policy.failure_policy != FAIL:
        return Denial(policy.name, _name(binding), f"unrecognized failure policy: '{policy.failure_policy}'")
    prefix = "failed to configure binding" if binding is not None else "failed to configure policy"
    return Denial(policy.name, _name(binding), f"{prefix}: {why}")


def _name(obj: dict[str, Any] | None) -> str | None:
    return None if obj is None else (obj.get("metadata") or {}).get("name", "")


def _match_conditions(policy: CompiledPolicy, invocation: Invocation) -> tuple[bool, str | None]:
    """(matches, error): any false condition skips; errors count only when none is false."""
    failures = []
    for condition in policy.match_conditions:
        try:
            if invocation.evaluate(condition.expression) is False:
                return False, None
        except InvocationError as err:
            failures.append(err.message)
    if failures:
        return False, errors.aggregate(failures)
    return True, None


def _message(policy: CompiledPolicy, index: int, invocation: Invocation) -> str:
    validation = policy.validations[index]
    message = ""
    if validation.message_expression is not None:
        try:
            value = invocation.evaluate(validation.message_expression)
        except InvocationError:
            value = None  # upstream logs the failure and falls back to the static message
        if isinstance(value, str):
            value = value.strip()
            if len(value) <= _MAX_MESSAGE and "\n" not in value:
                message = value
    if not message and validation.message.strip():
        message = validation.message.strip()
    return message or f"failed expression: {validation.expression.text.strip()}"


class ValidatingPolicyPlugin:
    name = "ValidatingAdmissionPolicy"

    def __init__(self, source: PolicySource, view: ClusterView):
        self.source = source
        self.view = view

    def validate(self, attrs: Attributes) -> None:
        hooks = self.source.validating_hooks()
        if not hooks:
            return
        request = Request(attrs, self.view)
        denials: list[Denial] = []
        for hook in hooks:
            self._dispatch(hook, request, denials)
        if denials:
            raise self._rejection(attrs, denials[0])

    def _dispatch(self, hook: Hook, request: Request, denials: list[Denial]) -> None:
        attrs, policy = request.attrs, hook.policy
        if matching.is_exempt(attrs) and not policy.static:
            return
        matched = matching.matches(policy.match_constraints, attrs, request.namespace_labels, self.view,
                                   is_binding=False, memo=hook.memo(None))
        if matched is None:
            return
        annotations: dict[str, list[str]] = {}
        if hook.plain_bindings:
            for binding in hook.bindings:
                self._evaluate(policy, binding, None, matched, request, denials, annotations)
        else:
            for binding, found, error in params_module.bound(hook, attrs, request.namespace_labels, self.view):
                if error is not None:
                    self._add(denials, _configuration_failure(policy, binding, error))
                for param in found:
                    self._evaluate(policy, binding, param, matched, request, denials, annotations)
        for key, values in annotations.items():
            attrs.audit_annotations[f"{policy.name}/{key}"] = ", ".join(values)

    @staticmethod
    def _add(denials: list[Denial], denial: Denial | None) -> None:
        if denial is not None:
            denials.append(denial)

    def _evaluate(self, policy: CompiledPolicy, binding: dict[str, Any], param: dict[str, Any] | None,
                  matched: matching.Matched, request: Request, denials: list[Denial],
                  annotations: dict[str, list[str]]) -> None:
        attrs = request.attrs
        invocation = request.invocation(policy, matched, param)
        failing = policy.failure_policy != IGNORE
        applies, error = _match_conditions(policy, invocation)
        if error is not None:
            if failing:
                self._act(policy, binding, 0, Denial(policy.name, _name(binding), error), attrs, denials)
            return
        if not applies:
            return
        for index, validation in enumerate(policy.validations):
            try:
                result = invocation.evaluate(validation.expression)
            except InvocationError as err:
                if failing:
                    self._act(policy, binding, index, Denial(policy.name, _name(binding), err.message), attrs, denials)
                continue
            if result is True:
                continue
            denial = Denial(policy.name, _name(binding), _message(policy, index, invocation),
                            validation.reason or "Invalid")
            self._act(policy, binding, index, denial, attrs, denials)
        for annotation in policy.audit_annotations:
            try:
                value = invocation.evaluate(annotation.expression)
            except InvocationError as err:
                if failing:
                    denials.append(Denial(policy.name, _name(binding), err.message))
                continue
            if value is None:
                continue
            if not isinstance(value, str):
                if failing:
                    denials.append(Denial(policy.name, _name(binding), (
                        f"valueExpression '{annotation.expression.text}' resulted in unsupported return type: "
                        f"{type(value).__name__}. Return type must be either string or null.")))
                continue
            value = value.strip()[:_MAX_AUDIT_VALUE]
            if value and value not in annotations.setdefault(annotation.name, []):
                annotations[annotation.name].append(value)

    @staticmethod
    def _act(policy: CompiledPolicy, binding: dict[str, Any], index: int, denial: Denial, attrs: Attributes,
             denials: list[Denial]) -> None:
        spec = binding.get("spec") or {}
        actions = spec.get("validationActions") or []
        for action in actions:
            if action == "Deny":
                denials.append(denial)
            elif action == "Warn":
                attrs.add_warning(f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' with binding "
                                  f"'{denial.binding}': {denial.message}")
            elif action == "Audit":
                attrs.audit_annotations[VALIDATION_FAILURE_ANNOTATION] = json.dumps([{
                    "message": denial.message, "policy": spec.get("policyName", policy.name),
                    "binding": denial.binding, "expressionIndex": index, "validationActions": actions,
                }], separators=(",", ":"))

    @staticmethod
    def _rejection(attrs: Attributes, denial: Denial) -> errors.Rejection:
        if denial.binding is not None:
            text = (f"ValidatingAdmissionPolicy '{denial.policy}' with binding '{denial.binding}' "
                    f"denied request: {denial.message}")
        else:
            text = f"ValidatingAdmissionPolicy '{denial.policy}' denied request: {denial.message}"
        reason = denial.reason or "Invalid"
        details = errors.details_for(attrs)
        details["causes"] = [{"message": text}]
        message = f'{errors.qualified_resource(attrs)} "{attrs.display_name()}" is forbidden: {text}'
        return errors.Rejection(_REASON_CODES.get(reason, 422), reason, message, details)
