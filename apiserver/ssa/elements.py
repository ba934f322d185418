"""Path elements: how FieldsV1 names a field (`f:`), a keyed list item (`k:`), a set value (`v:`)
or a list index (`i:`), and how a conflict prints them (`.spec.containers[name="web"].image`).

Keys are the canonical compact JSON structured-merge-diff writes, with the list-map keys sorted and
defaulted from the schema. The value walks and `fieldsets` call this; strict mode (for applied
configurations) raises `ElementError` where the live object is tolerated with an index instead.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from apiserver.ssa import shapes


class ElementError(ValueError):
    """An applied list item that cannot be named: a missing key, a duplicate, a bad set value.
    `path` is filled in by the walks as the error travels up (`.spec.ports`)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def within(self, element: str) -> ElementError:
        return ElementError(self.message, render(element) + self.path)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def canonical(value: Any) -> str:
    return msgspec.json.encode(value, order="sorted").decode()


def field(name: str) -> str:
    return "f:" + name


def item(value: Any, index: int, list_node: shapes.Node, *, strict: bool) -> str:
    """The element naming one list item under its list's semantics (set, keyed map)."""
    semantics, keys = shapes.list_semantics(list_node)
    try:
        if semantics == "map":
            return "k:" + canonical(_key_values(value, keys, list_node))
        if semantics == "set":
            if value is None:
                raise ElementError("associative list without keys has an element that's an explicit null")
            if isinstance(value, list):
                raise ElementError("not supported: associative list with lists as elements")
            if isinstance(value, dict):
                raise ElementError("associative list without keys has an element that's a map type")
            return "v:" + canonical(value)
    except ElementError as exc:
        if strict:
            raise ElementError(f"element {index}: {exc}") from None
    return f"i:{index}"


def _key_values(value: Any, keys: list[str], list_node: shapes.Node) -> dict[str, Any]:
    if value is None:
        raise ElementError("associative list with keys may not have a null element")
    if not isinstance(value, dict):
        raise ElementError("associative list with keys may not have non-map elements")
    found: dict[str, Any] = {}
    for key in keys:
        if key in value:
            found[key] = value[key]
            continue
        default = shapes.key_default(list_node, key)
        if default is None:
            raise ElementError(f'associative list with keys has an element that omits key field "{key}" '
                               "(and doesn't have default value)")
        found[key] = default
    return found


def canonicalize(element: str) -> str:
    """Re-encode the JSON part of a client-supplied element so equal items compare equal."""
    if element[:2] in ("k:", "v:"):
        try:
            return element[:2] + canonical(json.loads(element[2:]))
        except ValueError:
            return element
    return element


def _go_string(value: Any) -> str:
    """A value as structured-merge-diff's value.ToString prints it (strings quoted as Go's %q)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return "[" + ",".join(_go_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ";".join(f"{k}={_go_string(v)}" for k, v in sorted(value.items())) + "}"
    return str(value)


def render(element: str) -> str:
    kind, rest = element[:2], element[2:]
    if kind == "f:":
        return "." + rest
    if kind == "i:":
        return f"[{rest}]"
    decoded = json.loads(rest)
    if kind == "v:":
        return f"[={_go_string(decoded)}]"
    return "[" + ",".join(f"{k}={_go_string(v)}" for k, v in sorted(decoded.items())) + "]"


def render_path(path: list[str] | tuple[str, ...]) -> str:
    return "".join(render(e) for e in path)


def sort_key(element: str) -> tuple[int, str]:
    """structured-merge-diff orders fields, then keys, then values, then indexes."""
    rank = {"f:": 0, "k:": 1, "v:": 2, "i:": 3}.get(element[:2], 4)
    if rank == 3:
        return rank, element[2:].rjust(12, "0")
    return rank, element[2:]
