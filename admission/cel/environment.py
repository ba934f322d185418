"""`Environment` and `Program`: compile once (cached by text), evaluate many times, within cost limits.

An Environment is cel-expr-python's environment with haru's fixed option set — the strings,
optional, bindings, math and encoders extensions, the Kubernetes libraries (`library/`) and
their value types (`kube_types.POOL`) — plus the caller's variables. `compile()` caches
Programs and CompileErrors by text; `Program.evaluate()` checks the cost bound (`cost.py`) only
when the static estimate could pass the limit, evaluates, and returns plain Python values or
raises `errors.EvalError`. Admission policies, CRD rules and the scheduler's DRA selectors all
build their Environment here.
Per request, an `Activation` converts to CEL only the parts of the variables that the programs
evaluated in its environment read (`reads.py`), once for all of them. The cost bound is first
taken roughly from the size of those parts, and walked exactly only when the limit or the budget
needs it. A result is remembered per program by the exact bytes of what it read.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Mapping

import msgspec
from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings

from admission.cel import checked_ast, cost, errors, kube_types, library, struct_literals
from admission.cel.library import authz
from admission.cel.reads import Reads

_ERROR = cel.Type.ERROR
_CACHE_SIZE = 4096
_RESULTS_KEPT = 256  # remembered results per program; past that it starts afresh
_IMMUTABLE = (bool, int, float, str, bytes, type(None))


def _fresh(value: Any) -> Any:
    """A copy of a remembered result that its caller may change."""
    if isinstance(value, _IMMUTABLE):
        return value
    try:
        return msgspec.msgpack.decode(msgspec.msgpack.encode(value))
    except (TypeError, ValueError, OverflowError):
        return copy.deepcopy(value)


class CostBudgetExhausted(errors.EvalError):
    """The rules of one validation together spent more than their shared budget."""

    def __init__(self) -> None:
        super().__init__(cost.BUDGET_EXHAUSTED_MESSAGE)


class CostBudget:
    """A cost budget shared by the rules of one validation (RuntimeCELCostBudget upstream).

    A charge may be a rough one (a bound from the data's size, cheap to get) together with what
    the exact bound needs. Rough charges are made exact, newest first, only when the budget would
    otherwise run out, so a budget runs out exactly when the exact bounds would make it.
    """

    __slots__ = ("remaining", "_rough")

    def __init__(self, remaining: int = cost.RUNTIME_CEL_COST_BUDGET):
        self.remaining = remaining
        # (rough charge, the program's exact bound, the data it ran on, the per-call limit)
        self._rough: list[tuple[int, Callable[[Mapping[str, Any], int], int], Mapping[str, Any], int]] = []

    def charge(self, amount: int, exact: tuple[Callable[[Mapping[str, Any], int], int], Mapping[str, Any], int]
               | None = None) -> None:
        self.remaining -= amount
        if exact is not None:
            self._rough.append((amount, *exact))
        while self.remaining < 0 and self._rough:
            rough, bound, data, limit = self._rough.pop()
            self.remaining += rough - bound(data, limit)
        if self.remaining < 0:
            raise CostBudgetExhausted()


class Activation:
    """Variable values for one request, shared by every program evaluated on it. `data` is never
    changed once the Activation exists (a rough cost charge may be made exact from it later).

    Each program reads parts of the values (`reads.py`); the parts that the programs evaluated
    in this environment read together are converted to CEL once, when a program first needs
    them, and serve every program on this request.
    """

    __slots__ = ("env", "data", "_parts", "_natives", "_sizes", "_keys")

    def __init__(self, env: "Environment", data: Mapping[str, Any]):
        self.env = env
        self.data = data
        self._parts: dict[Any, dict[str, Any]] = {}
        self._natives: dict[Any, Any] = {}
        self._sizes: dict[Any, int] = {}
        self._keys: dict[Any, bytes | None] = {}

    def _part(self, wanted: Reads) -> dict[str, Any]:
        part = self._parts.get(wanted.key)
        if part is None:
            part = self._parts[wanted.key] = wanted.project(self.data)
        return part

    def native_for(self, reads: Reads) -> Any:
        """The parts a program with these `reads` needs, converted to CEL: the parts every program
        evaluated in this environment so far reads, so that one conversion serves them all."""
        wanted = self.env.reads_covering(reads)
        native = self._natives.get(wanted.key)
        if native is None:
            native = self._natives[wanted.key] = self.env._env.Activation(self._part(wanted))
        return native

    def size_for(self, reads: Reads) -> int:
        """An upper bound on the length of every string, list and map in the parts `reads` name."""
        wanted = self.env.reads_covering(reads)
        size = self._sizes.get(wanted.key)
        if size is None:
            size = self._sizes[wanted.key] = data_size(self._part(wanted))
        return size

    def memo_key(self, reads: Reads) -> bytes | None:
        """The exact bytes of what programs with these `reads` see (MessagePack, which keeps
        ints, floats, strings and bytes apart), or None when a value has no such form (an
        authorizer): equal keys mean equal inputs, so a pure program gives the same result."""
        wanted = self.env.reads_covering(reads)
        if wanted.key in self._keys:
            return self._keys[wanted.key]
        try:
            key: bytes | None = msgspec.msgpack.encode(self._part(wanted))
        except (TypeError, ValueError, OverflowError):
            key = None
        self._keys[wanted.key] = key
        return key


def _opaque(value: Any) -> None:
    return None  # a value with no JSON form (an authorizer): the cost bound sees no size in it


def data_size(data: Any) -> int:
    """The length of `data` as JSON: no string, list or map inside it can be longer."""
    return len(msgspec.json.encode(data, enc_hook=_opaque))


class Environment:
    """One CEL environment: declared variables, the Kubernetes libraries, a compile cache.

    `variables` maps names to `cel.Type`s (`DYN` for objects). `object_construction` turns on
    `Object{…}` / `JSONPatch{…}` (MutatingAdmissionPolicy). `authorize` decides authorizer
    checks; the default allows everything, since haru has no RBAC yet.
    """

    def __init__(
        self,
        variables: Mapping[str, cel.Type],
        *,
        object_construction: bool = False,
        authorize: authz.Decider = authz.allow_everyone,
        per_call_limit: int = cost.PER_CALL_LIMIT,
    ):
        self.variables = dict(variables)
        self.object_construction = object_construction
        self.per_call_limit = per_call_limit
        self._env = cel.NewEnv(
            kube_types.POOL,
            variables=self.variables,
            extensions=[
                ext_strings.ExtStrings(), ext_optional.ExtOptional(),
                ext_bindings.ExtBindings(), ext_math.ExtMath(), ext_encoders.ExtEncoders(),
                # Last, so that its overloads merge into names the extensions declare
                # (list indexOf beside the strings extension's indexOf).
                cel.CelExtension("kubernetes", library.function_decls(authorize)),
            ],
        )
        self._cache: dict[str, Program | errors.CompileError] = {}
        # The parts of the variables that the programs evaluated here so far read (see
        # `reads_covering`), and the reads it covers.
        self._reads = Reads({})
        self._covered: set[Any] = set()

    def compile(self, text: str) -> "Program":
        """The Program for `text`, compiled at most once; raises CompileError (also cached)."""
        cached = self._cache.get(text)
        if cached is None:
            cached = self._compile(text)
            if len(self._cache) >= _CACHE_SIZE:
                del self._cache[next(iter(self._cache))]
            self._cache[text] = cached
        if isinstance(cached, errors.CompileError):
            raise cached
        return cached

    def _compile(self, text: str) -> "Program | errors.CompileError":
        if self.object_construction:
            rewrite = struct_literals.rewrite(text)
        else:
            rewrite = struct_literals.Rewrite(text)
        try:
            expression = self._env.compile(rewrite.text)
        except RuntimeError as err:
            return errors.compile_error(str(err), text, rewrite.original_offset, rewrite.text)
        return Program(self, text, expression)

    def reads_covering(self, reads: Reads) -> Reads:
        """The parts read by every program evaluated here so far, `reads` included.

        Several programs on one request (the rules of several policies) each read a few parts;
        converting their union once is cheaper than converting each program's parts. The union
        only grows, with each new kind of program, so it settles on what the live rules read."""
        if reads.key not in self._covered:
            self._reads = self._reads.widened(reads)
            self._covered.add(reads.key)
        return self._reads

    def activation(self, data: Mapping[str, Any]) -> Activation:
        """Convert the variable values once, for evaluating several programs on one request."""
        return Activation(self, data)


class Program:
    """A compiled expression. `cost_estimate` is its static (min, max) cost."""

    __slots__ = ("env", "text", "cost_estimate", "reads", "_expression", "_root", "_bound", "_bound_by_size",
                 "_results", "_strings")

    def __init__(self, env: Environment, text: str, expression: Any):
        self.env = env
        self.text = text
        self._expression = expression
        self._root = checked_ast.decode(expression.serialize())
        self.cost_estimate = cost.estimate(self._root)
        self.reads = Reads.of(self._root, frozenset(env.variables))
        self._bound = None
        # Bounds for data no bigger than 2**k, by k: the rough charge (see `_charge`).
        self._bound_by_size: dict[int, int] = {}
        # Results by the exact bytes of what the program read (`Activation.memo_key`): CEL is
        # pure, and the pods of one ReplicaSet, say, give every rule the same input.
        self._results: dict[bytes, tuple[bool, Any]] = {}
        self._strings: frozenset[str] | None = None
        if self.cost_estimate.max > env.per_call_limit:
            self._bound = cost.compile_bound(self._root, frozenset(env.variables))

    @property
    def string_constants(self) -> frozenset[str]:
        """Every string literal in the expression. The DRA allocator gives a device an empty
        attribute map for each domain an expression names that the device lacks, since
        `device.attributes["unknown.domain"]` is an empty map there, not a missing key."""
        if self._strings is None:
            found: set[str] = set()
            stack = [self._root]
            while stack:
                node = stack.pop()
                if node.kind == "const" and isinstance(node.value, str):
                    found.add(node.value)
                stack.extend(child for child in (node.target, node.iter_range, node.accu_init, node.loop_condition,
                                                 node.loop_step, node.result) if child is not None)
                stack.extend(node.args)
            self._strings = frozenset(found)
        return self._strings

    def evaluate(
        self, variables: Mapping[str, Any] | Activation, *, budget: CostBudget | None = None,
        remember: bool = True,
    ) -> Any:
        """The result as plain Python values; raises EvalError, CostLimitExceeded or CostBudgetExhausted.

        `remember=False` evaluates even when the result for this input is remembered (the
        benchmarks time evaluations, not lookups)."""
        shared = type(variables) is Activation
        # An Activation's data never changes; a plain mapping is copied, for a rough charge
        # made exact later.
        data = variables.data if shared else dict(variables)  # type: ignore[union-attr]
        if self._bound is None:
            if budget is not None:
                budget.charge(self.cost_estimate.max)
        else:
            size = variables.size_for(self.reads) if shared else data_size(self.reads.project(data))  # type: ignore[union-attr]
            charged, exact = self._charge(data, size)
            if budget is not None:
                budget.charge(charged, exact)
        key = variables.memo_key(self.reads) if shared and remember else None  # type: ignore[union-attr]
        if key is not None:
            remembered = self._results.get(key)
            if remembered is not None:
                failed, payload = remembered
                if failed:
                    raise errors.eval_error(payload)
                return _fresh(payload)
        if shared:
            value = self._expression.eval(variables.native_for(self.reads))  # type: ignore[union-attr]
        else:
            value = self._expression.eval(data=self.reads.project(data))
        failed = value.type() == _ERROR
        payload = value.value() if failed else value.plain_value()
        if key is not None:
            if len(self._results) >= _RESULTS_KEPT:
                self._results.clear()
            self._results[key] = (failed, payload)
            if not failed:
                payload = _fresh(payload)  # the caller may change it; the remembered one stays
        if failed:
            raise errors.eval_error(payload)
        return payload

    def _charge(self, data: Mapping[str, Any], size: int
                ) -> tuple[int, tuple[Callable[[Mapping[str, Any], int], int], Mapping[str, Any], int] | None]:
        """(cost to charge, how to get the exact bound if that charge was a rough one).

        The exact bound walks the request's values (`cost.compile_bound`): several µs a rule.
        When the bound for any data of this size (rounded up to a power of two, remembered per
        program) is within the limit, that rough bound is charged instead, and the exact one is
        computed only if the budget would run out (`CostBudget.charge`)."""
        assert self._bound is not None
        bound, limit = self._bound, self.env.per_call_limit
        exponent = size.bit_length()
        rough = self._bound_by_size.get(exponent)
        if rough is None:
            try:
                rough = cost.sized_bound(bound, frozenset(self.env.variables), 1 << exponent)
            except cost.OverLimit:
                rough = cost.SATURATED
            self._bound_by_size[exponent] = rough
        if rough <= limit:
            return rough, (bound, data, limit)
        try:
            return bound(data, limit), None
        except cost.OverLimit:
            raise errors.CostLimitExceeded() from None
