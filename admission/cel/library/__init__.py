"""The Kubernetes CEL libraries, one module per upstream library (k8s.io/apiserver/pkg/cel/library).

Each module exposes `OVERLOADS`, a list of (function name, `Spec`). `function_decls()` turns
them into one `cel.FunctionDecl` per name. cel-cpp's runtime picks an overload by value kinds,
and every Kubernetes type is a protobuf message (one kind), so overloads that differ only in
message type (`compareTo` on Quantity and Semver, `check` on PathCheck and ResourceCheck,
`string` of IP and CIDR) are folded into one overload with `dyn` where they differ and a
dispatcher on the message type; wrong types then fail at run time ("no such overload") rather
than at compile time. `environment.py` registers the result as a cel extension.
"""

from __future__ import annotations

from typing import Any, Callable

from cel_expr_python import cel

from admission.cel.library.failure import LibraryError
from admission.cel.library.spec import Spec
from admission.cel.library import (
    authz, cidr, ip, jsonpatch, lists, quantity, regex, semver, sets, urls,
)

LIBRARIES = (quantity, urls, ip, cidr, regex, lists, sets, semver, jsonpatch)


def _kind(type_: cel.Type) -> str:
    return "message" if type_.is_message() else type_.name()


def _dispatcher(specs: list[Spec]) -> Callable[..., Any]:
    def dispatch(*args: Any) -> Any:
        for spec in specs:
            if all(
                not param.is_message()
                or getattr(getattr(arg, "DESCRIPTOR", None), "full_name", None) == param.name()
                for param, arg in zip(spec.params, args)
            ):
                return spec.impl(*args)
        raise LibraryError("no such overload")
    return dispatch


def _fold(name: str, specs: list[Spec]) -> Spec:
    params = [
        column[0] if all(t == column[0] for t in column) else cel.Type.DYN
        for column in zip(*(spec.params for spec in specs))
    ]
    result = specs[0].result if all(s.result == specs[0].result for s in specs) else cel.Type.DYN
    overload_id = "_or_".join(spec.overload_id for spec in specs)
    return Spec(overload_id, result, params, specs[0].member, _dispatcher(specs))


def function_decls(decide: authz.Decider = authz.allow_everyone) -> list[cel.FunctionDecl]:
    """Every library's overloads, one declaration per function name; `decide` answers authz checks."""
    by_shape: dict[tuple[str, bool, tuple[str, ...]], list[Spec]] = {}
    pairs = [pair for library in LIBRARIES for pair in library.OVERLOADS]
    for name, spec in pairs + authz.overloads(decide):
        shape = (name, spec.member, tuple(_kind(p) for p in spec.params))
        by_shape.setdefault(shape, []).append(spec)
    by_name: dict[str, list[cel.Overload]] = {}
    for (name, _, _), specs in by_shape.items():
        spec = specs[0] if len(specs) == 1 else _fold(name, specs)
        by_name.setdefault(name, []).append(cel.Overload(
            spec.overload_id, spec.result, spec.params, is_member=spec.member, impl=spec.impl))
    return [cel.FunctionDecl(name, overloads) for name, overloads in by_name.items()]
