"""`Spec`: one overload of a library function, before `library.function_decls` registers it.

Kept as plain data (cel.Overload cannot be inspected once built) so that overloads which the
cel runtime could not tell apart can be folded together first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from cel_expr_python import cel


@dataclass(frozen=True)
class Spec:
    overload_id: str
    result: cel.Type
    params: list[cel.Type]
    member: bool
    impl: Callable[..., Any]


def member(name: str, overload_id: str, result: cel.Type, params: list[cel.Type],
           impl: Callable[..., Any]) -> tuple[str, Spec]:
    """A receiver-style overload: `params[0]` is the receiver."""
    return name, Spec(overload_id, result, params, True, impl)


def function(name: str, overload_id: str, result: cel.Type, params: list[cel.Type],
             impl: Callable[..., Any]) -> tuple[str, Spec]:
    """A global overload, e.g. `quantity(<string>)` or `jsonpatch.escapeKey(<string>)`."""
    return name, Spec(overload_id, result, params, False, impl)


def overload(overload_id: str, result: cel.Type, params: list[cel.Type], *,
             is_member: bool = False, impl: Callable[..., Any]) -> Spec:
    """Same arguments as `cel.Overload`, kept as data."""
    return Spec(overload_id, result, list(params), is_member, impl)
