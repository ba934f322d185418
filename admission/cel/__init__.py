"""haru's one CEL environment, with the Kubernetes CEL libraries (cel-expr-python underneath).

Used by ValidatingAdmissionPolicy, MutatingAdmissionPolicy, CRD `x-kubernetes-validations`
and the scheduler's DRA device selectors:

    from admission import cel
    env = cel.Environment({"object": cel.DYN, "oldObject": cel.DYN, "params": cel.DYN,
                           "authorizer": cel.AUTHORIZER})
    program = env.compile("object.spec.replicas <= params.max")  # cached per (env, text)
    program.evaluate({"object": {...}, "params": {...}})           # plain Python values

Errors carry Kubernetes' texts: `CompileError` (cel-go's "ERROR: <input>:1:5: …" block),
`EvalError` ("no such key: x", library messages), `CostLimitExceeded` ("operation cancelled:
actual cost limit exceeded", per call, PerCallLimit 1,000,000) and `CostBudgetExhausted` (the
per-validation budget, 10,000,000, when callers pass one `CostBudget` to all their rules).

Libraries: quantity, url, ip, cidr, regex (find, findAll), lists (isSorted, sum, min, max,
indexOf, lastIndexOf), sets, semver, jsonpatch.escapeKey, authorizer (allows everyone until
RBAC exists), and cel's strings (format…), optionals (`.?`, orValue), cel.bind, math, base64.
`Environment(object_construction=True)` accepts `Object{…}`/`JSONPatch{…}` and yields dicts.
Kubernetes values for activations: `quantity("40Gi")`, `authorizer_for(user, groups)`,
`request_resource(...)`. Cost: `Program.cost_estimate` is static (min, max); before an
evaluation whose estimate could pass the limit, an upper bound is computed from the request's
real sizes (see `cost.py`): Kubernetes measures actual cost, haru checks this bound.
Activations convert only the parts of each variable that programs read (`reads.py`), and a
program's result is remembered by the exact input it read (`evaluate(..., remember=False)`
evaluates anyway).
Not available: two-variable comprehensions (cel-expr-python 0.1.3 lacks them), the `format.*`
named-format library and `image()`.
"""

from __future__ import annotations

from cel_expr_python.cel import Type

from admission.cel import kube_types
from admission.cel.cost import (
    BUDGET_EXHAUSTED_MESSAGE, COST_LIMIT_MESSAGE, PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET,
    STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT, CostEstimate,
)
from admission.cel.environment import (
    Activation, CostBudget, CostBudgetExhausted, Environment, Program,
)
from admission.cel.errors import CelError, CompileError, CostLimitExceeded, EvalError
from admission.cel.library.authz import for_user as authorizer_for, request_resource
from admission.cel.library.quantity import from_string as quantity

DYN = Type.DYN
BOOL = Type.BOOL
INT = Type.INT
DOUBLE = Type.DOUBLE
STRING = Type.STRING
AUTHORIZER = kube_types.AUTHORIZER
RESOURCE_CHECK = kube_types.RESOURCE_CHECK
QUANTITY = kube_types.QUANTITY

__all__ = [
    "Activation", "AUTHORIZER", "BOOL", "BUDGET_EXHAUSTED_MESSAGE", "COST_LIMIT_MESSAGE",
    "CelError", "CompileError", "CostBudget", "CostBudgetExhausted", "CostEstimate",
    "CostLimitExceeded", "DOUBLE", "DYN", "Environment", "EvalError", "INT",
    "PER_CALL_LIMIT", "Program", "QUANTITY", "RESOURCE_CHECK", "RUNTIME_CEL_COST_BUDGET",
    "STATIC_ESTIMATED_COST_LIMIT", "STATIC_ESTIMATED_CRD_COST_LIMIT", "STRING", "Type",
    "authorizer_for", "quantity", "request_resource",
]
