"""The checked syntax tree of a compiled expression, read from cel-expr-python's serialized form.

`Expression.serialize()` returns a `google.protobuf.Any` holding a `cel.expr.CheckedExpr`; this
module decodes the protobuf wire format directly (the cel protos are not installed as Python
modules) into small `Node` objects. Only what the cost estimator needs is kept: node kinds,
names, constants and children. Called by `cost.py` once per compiled program.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def wire_fields(data: bytes) -> dict[int, list[Any]]:
    """field number -> values (ints for varint/fixed, bytes for length-delimited)."""
    found: dict[int, list[Any]] = {}
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        found.setdefault(number, []).append(value)
    return found


@dataclass
class Node:
    """One expression node. kind: const, ident, select, call, list, map, struct, comprehension."""

    kind: str
    name: str = ""  # ident name, select field, call function, iteration variable
    value: Any = None  # constant value; for select, True when it is a has() test
    target: "Node | None" = None  # select operand, call receiver
    args: list["Node"] = field(default_factory=list)  # call args, list elements, map keys+values
    # Comprehension parts.
    iter_range: "Node | None" = None
    accu_var: str = ""
    accu_init: "Node | None" = None
    loop_condition: "Node | None" = None
    loop_step: "Node | None" = None
    result: "Node | None" = None


def _constant(data: bytes) -> Any:
    parts = wire_fields(data)
    if 2 in parts:
        return bool(parts[2][0])
    if 3 in parts:
        value = parts[3][0]
        return value - (1 << 64) if value >= 1 << 63 else value
    if 4 in parts:
        return parts[4][0]
    if 5 in parts:
        return struct.unpack("<d", parts[5][0])[0]
    if 6 in parts:
        return parts[6][0].decode()
    if 7 in parts:
        return parts[7][0]
    return None


def _text(parts: dict[int, list[Any]], number: int) -> str:
    return parts[number][0].decode() if number in parts else ""


def _node(data: bytes) -> Node:
    parts = wire_fields(data)
    if 3 in parts:
        return Node("const", value=_constant(parts[3][0]))
    if 4 in parts:
        return Node("ident", name=_text(wire_fields(parts[4][0]), 1))
    if 5 in parts:
        sel = wire_fields(parts[5][0])
        return Node("select", name=_text(sel, 2), value=bool(sel.get(3, [0])[0]),
                    target=_node(sel[1][0]) if 1 in sel else None)
    if 6 in parts:
        call = wire_fields(parts[6][0])
        return Node("call", name=_text(call, 2),
                    target=_node(call[1][0]) if 1 in call else None,
                    args=[_node(arg) for arg in call.get(3, [])])
    if 7 in parts:
        return Node("list", args=[_node(e) for e in wire_fields(parts[7][0]).get(1, [])])
    if 8 in parts:
        create = wire_fields(parts[8][0])
        children: list[Node] = []
        for entry_data in create.get(2, []):
            entry = wire_fields(entry_data)
            if 3 in entry:
                children.append(_node(entry[3][0]))
            if 4 in entry:
                children.append(_node(entry[4][0]))
        return Node("struct" if 1 in create else "map", name=_text(create, 1), args=children)
    if 9 in parts:
        comp = wire_fields(parts[9][0])

        def part(number: int) -> Node | None:
            return _node(comp[number][0]) if number in comp else None

        return Node("comprehension", name=_text(comp, 1), iter_range=part(2),
                    accu_var=_text(comp, 3), accu_init=part(4), loop_condition=part(5),
                    loop_step=part(6), result=part(7))
    return Node("const")


def decode(serialized: bytes) -> Node:
    """The root node of a serialized checked expression (an Any wrapping CheckedExpr)."""
    envelope = wire_fields(serialized)
    checked = wire_fields(envelope[2][0]) if 2 in envelope else envelope
    return _node(checked[4][0])
