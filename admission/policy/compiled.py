"""A policy object compiled once: every expression of a Validating- or MutatingAdmissionPolicy.

`compile_validating(obj)` / `compile_mutating(obj)` turn a stored (defaulted) policy into a
`CompiledPolicy`: match conditions, variables, validations with their message expressions,
audit annotations, mutations. Expressions that do not compile keep their error text; the
dispatchers report them at request time under the policy's failurePolicy, as upstream does for
policies stored before a rule tightened. `source.py` calls these when a policy's revision
changes; `validating.py` and `mutating.py` evaluate the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from admission.policy import expressions
from admission.policy.expressions import CompiledExpression

FAIL, IGNORE = "Fail", "Ignore"
VALIDATING, MUTATING = "ValidatingAdmissionPolicy", "MutatingAdmissionPolicy"
APPLY_CONFIGURATION, JSON_PATCH = "ApplyConfiguration", "JSONPatch"


@dataclass(frozen=True)
class NamedExpression:
    name: str
    expression: CompiledExpression


@dataclass(frozen=True)
class Validation:
    expression: CompiledExpression
    message: str = ""
    message_expression: CompiledExpression | None = None
    reason: str = ""


@dataclass(frozen=True)
class Mutation:
    patch_type: str
    expression: CompiledExpression | None


@dataclass
class CompiledPolicy:
    name: str
    kind: str  # "ValidatingAdmissionPolicy" or "MutatingAdmissionPolicy"
    obj: dict[str, Any]
    failure_policy: str
    param_kind: dict[str, Any] | None
    match_constraints: dict[str, Any]
    match_conditions: list[NamedExpression] = field(default_factory=list)
    variables: list[NamedExpression] = field(default_factory=list)
    validations: list[Validation] = field(default_factory=list)
    audit_annotations: list[NamedExpression] = field(default_factory=list)
    mutations: list[Mutation] = field(default_factory=list)
    reinvocation_policy: str = "Never"
    # Loaded from a manifest (KEP-5793): never from the API, and may match admission resources.
    static: bool = False
    # The CEL variables any of its expressions reads (`object`, `request`, `authorizer`, …): an
    # invocation builds only these.
    reads: frozenset[str] = frozenset()

    def expressions(self) -> list[CompiledExpression]:
        found = [c.expression for c in self.match_conditions + self.variables + self.audit_annotations]
        for validation in self.validations:
            found.append(validation.expression)
            if validation.message_expression is not None:
                found.append(validation.message_expression)
        found += [m.expression for m in self.mutations if m.expression is not None]
        return found

    @property
    def generation(self) -> int:
        return int((self.obj.get("metadata") or {}).get("generation") or 0)


def _common(obj: dict[str, Any], kind: str, static: bool) -> CompiledPolicy:
    spec = obj.get("spec") or {}
    param_kind = spec.get("paramKind")
    policy = CompiledPolicy(
        name=(obj.get("metadata") or {}).get("name", ""), kind=kind, obj=obj,
        failure_policy=spec.get("failurePolicy") or FAIL, param_kind=param_kind,
        match_constraints=spec.get("matchConstraints") or {}, static=static,
    )
    has_params = param_kind is not None
    for condition in spec.get("matchConditions") or []:
        compiled = expressions.compile_expression(condition.get("expression", ""), expected=expressions.BOOL,
                                                  params=has_params)
        policy.match_conditions.append(NamedExpression(condition.get("name", ""), compiled))
    for variable in spec.get("variables") or []:
        compiled = expressions.compile_expression(variable.get("expression", ""), expected=expressions.ANY,
                                                  params=has_params, construction=kind == MUTATING)
        policy.variables.append(NamedExpression(variable.get("name", ""), compiled))
    return policy



def compile_validating(obj: dict[str, Any], *, static: bool = False) -> CompiledPolicy:
    policy = _common(obj, VALIDATING, static)
    spec = obj.get("spec") or {}
    has_params = policy.param_kind is not None
    for validation in spec.get("validations") or []:
        message_expression = None
        if (validation.get("messageExpression") or "").strip():
            message_expression = expressions.compile_expression(
                validation["messageExpression"], expected=expressions.STRING, params=has_params, authorizer=False)
        policy.validations.append(Validation(
            expressions.compile_expression(validation.get("expression", ""), expected=expressions.BOOL,
                                           params=has_params),
            message=validation.get("message") or "", message_expression=message_expression,
            reason=validation.get("reason") or "",
        ))
    for annotation in spec.get("auditAnnotations") or []:
        compiled = expressions.compile_expression((annotation.get("valueExpression") or "").strip(),
                                                  expected=expressions.STRING_OR_NULL, params=has_params)
        policy.audit_annotations.append(NamedExpression(annotation.get("key", ""), compiled))
    return _with_reads(policy)


def compile_mutating(obj: dict[str, Any], *, static: bool = False) -> CompiledPolicy:
    policy = _common(obj, MUTATING, static)
    spec = obj.get("spec") or {}
    policy.reinvocation_policy = spec.get("reinvocationPolicy") or "Never"
    has_params = policy.param_kind is not None
    for mutation in spec.get("mutations") or []:
        patch_type = mutation.get("patchType") or ""
        body = mutation.get("applyConfiguration") if patch_type == APPLY_CONFIGURATION else mutation.get("jsonPatch")
        compiled = None
        if isinstance(body, dict) and body.get("expression"):
            expected = expressions.OBJECT if patch_type == APPLY_CONFIGURATION else expressions.JSON_PATCHES
            compiled = expressions.compile_expression(body["expression"], expected=expected, params=has_params,
                                                      construction=True)
        policy.mutations.append(Mutation(patch_type, compiled))
    return _with_reads(policy)


def _with_reads(policy: CompiledPolicy) -> CompiledPolicy:
    policy.reads = frozenset(name for compiled in policy.expressions() if compiled.program is not None
                             for name in compiled.program.reads.plans)
    return policy
