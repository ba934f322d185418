"""Compiling one policy expression: the CEL environments policies use, return types, variable references.

Every policy expression compiles in one of a few environments, as upstream's compiler picks
them: `object`, `oldObject`, `request`, `namespaceObject` and `variables` always; `params` only
when the policy has a paramKind; `authorizer` (and `authorizer.requestResource`) except in
messageExpression; `Object{…}`/`JSONPatch{…}` construction for MutatingAdmissionPolicy
mutations. `compile_expression` returns a `CompiledExpression` whose `error` carries upstream's
field-error detail ("compilation failed: ERROR: <input>:…", "must evaluate to bool but got dyn").
Callers: `compiled.py` (policies), the policy strategy (create-time validation), `type_checking.py`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from admission import cel

BOOL, STRING, STRING_OR_NULL, ANY, OBJECT, JSON_PATCHES = "bool", "string", "string|null", "any", "Object", "patches"

_VARIABLE_REFERENCE = re.compile(r"\bvariables\s*\.\s*\??\s*([A-Za-z_][A-Za-z0-9_]*)")
_TYPE_NAMES = {"BOOL": "bool", "DYN": "dyn", "INT": "int", "UINT": "uint", "DOUBLE": "double",
               "STRING": "string", "BYTES": "bytes", "NULL": "null_type", "ERROR": "*error*",
               "TIMESTAMP": "google.protobuf.Timestamp", "DURATION": "google.protobuf.Duration"}
_GENERIC = {"LIST": "list", "MAP": "map", "TYPE": "type", "optional_type": "optional_type"}


@dataclass(frozen=True)
class CompiledExpression:
    text: str
    program: cel.Program | None
    # Upstream's detail when the expression cannot be used ("compilation failed: …"), else None.
    error: str | None
    # Names the expression reads as `variables.<name>` (for lazy variable evaluation).
    variables: frozenset[str]


@functools.cache
def environment(*, params: bool, authorizer: bool, construction: bool = False) -> cel.Environment:
    declared: dict[str, cel.Type] = {
        "object": cel.DYN, "oldObject": cel.DYN, "request": cel.DYN, "namespaceObject": cel.DYN,
        "variables": cel.DYN,
    }
    if params:
        declared["params"] = cel.DYN
    if authorizer:
        declared["authorizer"] = cel.AUTHORIZER
        declared["authorizer.requestResource"] = cel.RESOURCE_CHECK
    return cel.Environment(declared, object_construction=construction)


def cel_go_type_name(cel_type: object) -> str:
    """cel-expr-python's type text ("LIST<INT>") as cel-go prints the type ("list(int)")."""
    text = str(cel_type)

    def convert(part: str) -> str:
        part = part.strip()
        if "<" in part and part.endswith(">"):
            head, inner = part.split("<", 1)
            args, depth, current = [], 0, ""
            for char in inner[:-1]:
                if char == "<":
                    depth += 1
                elif char == ">":
                    depth -= 1
                if char == "," and depth == 0:
                    args.append(current)
                    current = ""
                else:
                    current += char
            args.append(current)
            return f"{_GENERIC.get(head, head.lower())}({', '.join(convert(a) for a in args)})"
        return _TYPE_NAMES.get(part, part)

    return convert(text)


def _type_error(expected: str, got: str) -> str | None:
    if expected == ANY:
        return None
    if expected == BOOL:
        return None if got == "bool" else f"must evaluate to bool but got {got}"
    if expected == STRING:
        return None if got == "string" else f"must evaluate to string but got {got}"
    if expected == STRING_OR_NULL:
        return None if got in ("string", "null_type") else f"must evaluate to one of [string null_type] but got {got}"
    if expected == OBJECT:
        # Object{…} literals become maps before compiling (struct_literals.py).
        return None if got == "dyn" or got.startswith("map(") else f"must evaluate to Object but got {got}"
    if expected == JSON_PATCHES:
        return None if got == "dyn" or got.startswith("list(") else f"must evaluate to list(JSONPatch) but got {got}"
    raise ValueError(f"unknown expected type {expected}")


def variable_references(text: str) -> frozenset[str]:
    return frozenset(_VARIABLE_REFERENCE.findall(text))


def compile_expression(text: str, *, expected: str, params: bool, authorizer: bool = True,
                       construction: bool = False) -> CompiledExpression:
    env = environment(params=params, authorizer=authorizer, construction=construction)
    references = variable_references(text)
    try:
        program = env.compile(text)
    except cel.CompileError as err:
        return CompiledExpression(text, None, f"compilation failed: {err.message}", references)
    problem = _type_error(expected, cel_go_type_name(program._expression.return_type()))
    if problem:
        return CompiledExpression(text, None, problem, references)
    return CompiledExpression(text, program, None, references)
