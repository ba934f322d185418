"""The CEL inputs of one policy invocation, and evaluation with upstream's error texts.

`request_variable(attrs, matched)` builds the `request` value (AdmissionRequest without object
and oldObject); `namespace_object(ns)` keeps what upstream's CreateNamespaceObject keeps.
`Shared` holds what all invocations of one request share (request value, authorizer, converted
Activations); an `Invocation` is one (policy, binding, param) triple; `evaluate(expr)` reuses
a shared Activation when nothing differs (no variables), computes the policy's
`variables` lazily — only those an expression references, each once — and raises
`InvocationError` with upstream's text: "expression '<text>' resulted in error: <cause>",
"compilation failed: …", or the cost budget message. Used by `validating.py` and `mutating.py`.
"""

from __future__ import annotations

from typing import Any, Callable

from admission import cel
from admission.attributes import Attributes, UserInfo
from admission.policy.compiled import NamedExpression
from admission.policy.expressions import CompiledExpression
from admission.policy.matching import Matched


class InvocationError(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


_NAMESPACE_META = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                   "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "finalizers")


def namespace_object(namespace: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `namespaceObject` variable: metadata without managedFields and owners, spec, status."""
    if namespace is None:
        return None
    meta = namespace.get("metadata") or {}
    return {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {k: meta[k] for k in _NAMESPACE_META if k in meta},
        "spec": namespace.get("spec") or {}, "status": namespace.get("status") or {},
    }


def request_variable(attrs: Attributes, matched: Matched) -> dict[str, Any]:
    return {
        "kind": {"group": matched.group, "version": matched.version, "kind": matched.kind},
        "resource": {"group": matched.group, "version": matched.version, "resource": matched.resource},
        "subResource": attrs.subresource,
        "requestKind": {"group": attrs.group, "version": attrs.version, "kind": attrs.kind},
        "requestResource": {"group": attrs.group, "version": attrs.version, "resource": attrs.resource},
        "requestSubResource": attrs.subresource,
        "name": attrs.name,
        "namespace": attrs.namespace,
        "operation": attrs.operation,
        "userInfo": attrs.user.as_request_field(),
        "dryRun": attrs.dry_run,
        "options": attrs.options,
    }


def versioned(obj: dict[str, Any] | None, matched: Matched, attrs: Attributes) -> dict[str, Any] | None:
    """The object as the matched version sees it (haru's versions differ only in apiVersion)."""
    if obj is None or matched.version == attrs.version:
        return obj
    api_version = f"{matched.group}/{matched.version}" if matched.group else matched.version
    return {**obj, "apiVersion": api_version}


class Shared:
    """Inputs every invocation of one request shares: converted once, reused by every policy.

    Each is built when a policy first reads it. It keeps no reference to the request's
    Attributes (it lives in `Attributes.memo`, and a cycle would leave every request's garbage
    to the cycle collector)."""

    def __init__(self, user: UserInfo):
        self._user = user
        self._authorizer: object | None = None
        self._requests: dict[Matched, dict[str, Any]] = {}
        self._request_resources: dict[Matched, object] = {}
        # (env, matched, params, object, variables read) → (the objects the key names, Activation);
        # kept alive by the value.
        self._activations: dict[tuple[Any, ...], tuple[tuple[Any, ...], cel.Activation]] = {}

    @property
    def authorizer(self) -> object:
        if self._authorizer is None:
            user = self._user
            self._authorizer = cel.authorizer_for(user.username, list(user.groups), user.uid)
        return self._authorizer

    def request(self, attrs: Attributes, matched: Matched) -> dict[str, Any]:
        """The `request` value for one matched resource."""
        found = self._requests.get(matched)
        if found is None:
            found = self._requests[matched] = request_variable(attrs, matched)
        return found

    def request_resource(self, attrs: Attributes, matched: Matched) -> object:
        """`authorizer.requestResource` for one matched resource."""
        found = self._request_resources.get(matched)
        if found is None:
            found = self._request_resources[matched] = cel.request_resource(
                self.authorizer, group=matched.group, resource=matched.resource, subresource=attrs.subresource,
                namespace=attrs.namespace, name=attrs.name)
        return found

    def activation(self, program: cel.Program, matched: Matched, data: dict[str, Any],
                   reads: frozenset[str]) -> cel.Activation:
        """An Activation for `data`, shared by invocations with the same params and object that
        read the same variables."""
        key = (id(program.env), matched, id(data["params"]), id(data["object"]), reads)
        found = self._activations.get(key)
        if found is None:
            wanted = {name: value for name, value in data.items() if name in program.env.variables}
            found = ((program.env, data["params"], data["object"]), program.env.activation(wanted))
            self._activations[key] = found
        return found[1]


_NONE_DECLARED: dict[str, CompiledExpression] = {}  # shared by invocations of policies without variables
_NONE_ORDERED: list[str] = []


class Invocation:
    """One evaluation context: fixed inputs plus the policy's lazily computed variables."""

    __slots__ = ("shared", "matched", "reads", "data", "_declared", "_order", "_failed", "_activations", "budget")

    def __init__(self, shared: Shared, attrs: Attributes, matched: Matched, *, obj: dict[str, Any] | None,
                 old: dict[str, Any] | None, params: dict[str, Any] | None,
                 namespace: Callable[[], dict[str, Any] | None], variables: list[NamedExpression],
                 reads: frozenset[str]):
        """`reads`: the variables the policy's expressions read; the others stay null."""
        self.shared = shared
        self.matched = matched
        self.reads = reads
        self.data: dict[str, Any] = {
            "object": obj, "oldObject": old,
            "request": shared.request(attrs, matched) if "request" in reads else None,
            "namespaceObject": namespace() if "namespaceObject" in reads else None,
            "params": params,
            "authorizer": shared.authorizer if "authorizer" in reads else None,
            "authorizer.requestResource":
                shared.request_resource(attrs, matched) if "authorizer.requestResource" in reads else None,
            "variables": {},
        }
        self._declared = {v.name: v.expression for v in variables} if variables else _NONE_DECLARED
        self._order = [v.name for v in variables] if variables else _NONE_ORDERED
        self._failed: dict[str, str] = {}
        self._activations: dict[int, cel.Activation] = {}
        self.budget = cel.CostBudget()

    def _activation(self, program: cel.Program) -> cel.Activation:
        if not self.data["variables"]:
            return self.shared.activation(program, self.matched, self.data, self.reads)
        env = program.env
        activation = self._activations.get(id(env))
        if activation is None:
            wanted = {name: value for name, value in self.data.items() if name in env.variables}
            activation = env.activation(wanted)
            self._activations[id(env)] = activation
        return activation

    def _needed(self, names: frozenset[str]) -> list[str]:
        """The declared variables `names` reach, in declaration order (variables may use earlier ones)."""
        wanted = set(n for n in names if n in self._declared)
        for name in reversed(self._order):
            if name in wanted:
                wanted |= {n for n in self._declared[name].variables if n in self._declared}
        return [n for n in self._order if n in wanted]

    def _compute_variables(self, names: frozenset[str]) -> None:
        computed: dict[str, Any] = self.data["variables"]
        missing = [n for n in self._needed(names) if n not in computed and n not in self._failed]
        for name in missing:
            expression = self._declared[name]
            if any(dep in self._failed for dep in expression.variables):
                self._failed[name] = next(self._failed[d] for d in expression.variables if d in self._failed)
                continue
            try:
                computed[name] = self._run(expression)
            except InvocationError as err:
                self._failed[name] = err.message
            # Programs that read `variables` must see the new value: convert again next time.
            self._activations.clear()

    def _run(self, expression: CompiledExpression) -> Any:
        if expression.program is None:
            raise InvocationError(expression.error or "compilation failed")
        try:
            return expression.program.evaluate(self._activation(expression.program), budget=self.budget)
        except cel.CostBudgetExhausted as err:
            raise InvocationError(err.message) from None
        except cel.EvalError as err:
            raise InvocationError(f"expression '{expression.text}' resulted in error: {err.message}") from None

    def evaluate(self, expression: CompiledExpression) -> Any:
        """The expression's value; InvocationError with upstream's message on any failure."""
        if expression.variables:
            self._compute_variables(expression.variables)
            for name in expression.variables:
                if name in self._failed:
                    raise InvocationError(self._failed[name])
        return self._run(expression)

    def replace_object(self, obj: dict[str, Any] | None) -> None:
        """A mutation changed the object: later expressions (and variables) see the new one."""
        self.data["object"] = obj
        self.data["variables"] = {}
        self._failed.clear()
        self._activations.clear()
