"""The custom resources this process serves right now, for code that sees only group and resource.

`kinds.strategy_for` and `tables.printer_for` are called with (group, resource) alone, so the
CRD controller (`controller.py`) publishes each established `Definition` here and withdraws it
when the CRD goes. One table per process: every haru process runs one API server; tests that
start several in one process must not give two of them the same CRD with different schemas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apiserver.crds.definition import Definition

_definitions: dict[tuple[str, str], "Definition"] = {}


def publish(definition: "Definition") -> None:
    _definitions[(definition.group, definition.plural)] = definition


def withdraw(group: str, plural: str, uid: str | None = None) -> None:
    """Forget a definition; with `uid`, only if it is still that CRD's (a newer one stays)."""
    current = _definitions.get((group, plural))
    if current is not None and (uid is None or current.uid == uid):
        del _definitions[(group, plural)]


def lookup(group: str, resource: str) -> "Definition | None":
    return _definitions.get((group, resource))
