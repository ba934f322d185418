"""The JSON shape Go's encoder gives a built-in object: omitempty applied, fields in Go order.

kube-apiserver decodes every write into its Go type and encodes that, so an empty map or string
under `omitempty` disappears (`annotations: {}`, `labels: {}`), a pointer keeps its zero value
(`replicas: 0`, `hostUsers: false`), structs stay `{}`, fields come out in struct order (TypeMeta's
`kind`, `apiVersion` first) and map keys sorted. `shape()` does that in place on a decoded object,
with one plan per message compiled once from the protobuf table (`protobuf_schema.py`) and the
Go declaration order of `data/k8s-1.36-go-order.json`. `writing.py` calls it on every write of a
built-in kind; custom resources are left as their writers sent them, as upstream leaves them.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import msgspec

from apiserver import protobuf_schema, protobuf_wire

ORDER_PATH = os.path.join(os.path.dirname(__file__), "data", "k8s-1.36-go-order.json")

# What omitempty (or omitzero) does with a field's value.
KEEP = 0         # always written (no omitempty, or a non-pointer struct)
DROP_FALSY = 1   # a zero scalar, "" or an empty map/slice is left out (a JSON null is too)
DROP_NULL = 2    # a pointer (or omitzero Time): only nil is left out, a present zero value stays

# How far to look inside a field's value.
LEAF = 0         # scalars, special messages (Time, Quantity, RawExtension...): nothing inside
STRUCT = 1       # a message
STRUCTS = 2      # a slice of messages
MAP = 3          # a map of scalars: keys sorted
STRUCT_MAP = 4   # a map of messages: keys sorted, values shaped

_TYPE_META = ("kind", "apiVersion")  # metav1.TypeMeta, inline first in every top-level kind
# The protobuf envelope's own messages: never a field of a stored object, nothing to walk.
_ENVELOPES = frozenset({"k8s.io.apimachinery.pkg.runtime.Unknown", "k8s.io.apimachinery.pkg.runtime.TypeMeta"})
_OMITZERO = {("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", "creationTimestamp")}
# Never walked: managedFields entries are only ever written by `ssa/managers.encode`, in
# ManagedFieldsEntry's Go order already (a client's entries are decoded and encoded again).
_ALREADY_GO = {("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", "managedFields")}
# Scalars whose zero is filled in when absent (a nil []byte is null; that and the special structs,
# Time's null above all, are left absent: nobody reading haru's objects has to meet a null).
_FILLED_SCALARS = frozenset({
    protobuf_schema.STRING, protobuf_schema.INT32, protobuf_schema.INT64, protobuf_schema.UINT32,
    protobuf_schema.UINT64, protobuf_schema.BOOL, protobuf_schema.DOUBLE, protobuf_schema.FLOAT,
})


class Plan:
    """One message's fields by JSON name, (Go position, omit rule, value plan, how to descend),
    and per key sequence seen (`tuple(obj)`) what that sequence needs: objects of one kind come
    in few key sequences, so the per-key decisions are made once per sequence, not per write."""

    __slots__ = ("fields", "always", "sequences")

    def __init__(self) -> None:
        self.fields: dict[str, tuple[int, int, Plan | None, int]] = {}
        # Fields Go writes even when nobody set them: a non-pointer struct (as `{}`, its own such
        # fields inside) or a scalar without omitempty (as its zero), with that zero.
        self.always: tuple[tuple[str, Plan | None, Any], ...] = ()
        self.sequences: dict[tuple[str, ...], _Sequence] = {}

    def sequence(self, keys: tuple[str, ...]) -> _Sequence:
        found = self.sequences.get(keys)
        if found is None:
            found = _Sequence(self, keys)
            if len(self.sequences) < _MAX_SEQUENCES:
                self.sequences[keys] = found
        return found


class _Sequence:
    """What one key sequence of one message needs: which values omitempty may drop, which to
    walk into, whether the keys are out of Go order (then `order` is the Go order), and which
    always-written fields it lacks."""

    __slots__ = ("omits", "walks", "order", "missing")

    def __init__(self, plan: Plan, keys: tuple[str, ...]) -> None:
        fields = plan.fields
        present = set(keys)
        self.missing = tuple(row for row in plan.always if row[0] not in present)
        unknown = len(fields)  # not Go fields (pruning normally removed them): kept, after the known ones
        self.omits = tuple((k, fields[k][1]) for k in keys if k in fields and fields[k][1] != KEEP)
        self.walks = tuple((k, fields[k][2], fields[k][3]) for k in keys if k in fields and fields[k][3] != LEAF)
        positions = [fields[k][0] if k in fields else unknown for k in keys]
        self.order: tuple[str, ...] | None = None
        if positions != sorted(positions):
            self.order = tuple(k for _, k in sorted(zip(positions, keys), key=lambda pk: pk[0]))


_MAX_SEQUENCES = 512  # per message; past that (odd clients), sequences are worked out per write


class _Compiler:
    def __init__(self) -> None:
        table = protobuf_schema.table()
        self.plans: dict[str, Plan] = {}
        self.messages = table.plans
        with open(ORDER_PATH, "rb") as f:
            self.order: dict[str, list[int]] = msgspec.json.decode(f.read())["order"]

    def plan(self, name: str, type_meta: bool = False) -> Plan:
        key = name + ("+TypeMeta" if type_meta else "")
        plan = self.plans.get(key)
        if plan is None:
            plan = self.plans[key] = Plan()  # registered first: message types are cyclic (JSONSchemaProps)
            # TypeMeta's two strings are omitempty too.
            rows: list[tuple[str, int, Plan | None, int]] = [(n, DROP_FALSY, None, LEAF) for n in _TYPE_META] \
                if type_meta else []
            always: list[tuple[str, Plan | None, Any]] = []
            self._flatten(name, rows, always)
            plan.fields = {json_name: (pos, omit, sub, how) for pos, (json_name, omit, sub, how) in enumerate(rows)}
            plan.always = tuple(always)
        return plan

    def _flatten(self, name: str, rows: list[tuple[str, int, Plan | None, int]],
                 always: list[tuple[str, Plan | None, Any]]) -> None:
        """The message's JSON fields in Go order; an inline struct's fields sit where it is embedded."""
        message = self.messages[name]
        numbers = self.order.get(name) or sorted(message.fields)
        for number in numbers:
            field = message.fields[number]
            if field.hidden:
                continue
            if field.inline:
                self._flatten(field.message.name, rows, always)
                continue
            sub, how = (None, LEAF) if (name, field.name) in _ALREADY_GO else self._descend(field)
            rows.append((field.name, self._omit(name, field), sub, how))
            if field.pointer or field.repeated:
                continue  # nil is omitted, or written as null: never filled in
            if how == STRUCT:
                always.append((field.name, sub, None))
            elif field.kind in _FILLED_SCALARS and not field.omit:
                always.append((field.name, None, protobuf_schema.ZEROS[field.kind]))

    @staticmethod
    def _omit(message: str, field: protobuf_schema.FieldPlan) -> int:
        if (message, field.name) in _OMITZERO:
            return DROP_NULL
        if not field.omit:
            return KEEP
        if field.pointer:
            return DROP_NULL
        if field.repeated or field.kind == protobuf_schema.MAP:
            return DROP_FALSY
        if field.kind == protobuf_schema.MESSAGE:
            # omitempty does nothing to a Go struct; a wrapped slice (Verbs) is a slice.
            return DROP_FALSY if field.message.is_slice else KEEP
        return DROP_FALSY

    def _descend(self, field: protobuf_schema.FieldPlan) -> tuple[Plan | None, int]:
        message = field.message
        walkable = message is not None and message.mode == protobuf_schema.GENERIC and not message.is_slice \
            and message.name not in _ENVELOPES
        if field.kind == protobuf_schema.MAP:
            return (self.plan(message.name), STRUCT_MAP) if walkable else (None, MAP)
        if not walkable:
            return None, LEAF
        return self.plan(message.name), STRUCTS if field.repeated else STRUCT


@functools.cache
def _compiler() -> _Compiler:
    return _Compiler()


@functools.cache
def plan_for(api_version: str, kind: str) -> Plan | None:
    """The plan for a top-level built-in kind, or None when the table has no message for it."""
    try:
        message = protobuf_schema.table().plan_for(api_version, kind)
    except protobuf_wire.DecodeError:  # no message for it (Table, a kind the table lacks): left alone
        return None
    return _compiler().plan(message.name, type_meta=True)


def shape(obj: dict[str, Any], plan: Plan, fill: bool = False) -> None:
    """Give `obj` (in place) the shape Go's encoder writes for the message `plan` describes.
    `fill`: also write what Go writes for fields nobody set (`status: {}`, a required string's
    ""), as for an object about to be stored."""
    keys = tuple(obj)
    seq = plan.sequences.get(keys) or plan.sequence(keys)
    if fill and seq.missing:
        for key, _, zero in seq.missing:
            obj[key] = {} if zero is None else zero
        keys = tuple(obj)
        seq = plan.sequences.get(keys) or plan.sequence(keys)
    for key, sub, how in seq.walks:
        value = obj[key]
        value_type = type(value)
        if how == STRUCT:
            if value_type is dict:
                shape(value, sub, fill)  # type: ignore[arg-type]
        elif how == STRUCTS:
            if value_type is list:
                for item in value:
                    if type(item) is dict:
                        shape(item, sub, fill)  # type: ignore[arg-type]
        elif value_type is dict:
            if len(value) > 1:
                _sort_keys(value)
            if how == STRUCT_MAP:
                for item in value.values():
                    if type(item) is dict:
                        shape(item, sub, fill)  # type: ignore[arg-type]
    if seq.order is not None or (seq.omits and not all(obj.values())):  # else nothing to do here
        _fix_level(obj, seq)


def shape_top(obj: dict[str, Any], plan: Plan) -> None:
    """Like `shape`, for the top level and the first level below it only (metadata, spec,
    status...), for a writer that knows it changed nothing deeper in an object already in shape
    (the binding: spec.nodeName, annotations); about 3 µs for a Pod, a whole pass 12 to 18."""
    _shape_level(obj, plan)
    for key, value in obj.items():
        row = plan.fields.get(key)
        if row is not None and row[3] == STRUCT and type(value) is dict:
            _shape_level(value, row[2])  # type: ignore[arg-type]


def _shape_level(obj: dict[str, Any], plan: Plan) -> None:
    keys = tuple(obj)
    seq = plan.sequences.get(keys) or plan.sequence(keys)
    for key, _, how in seq.walks:
        value = obj[key]
        if how == MAP and type(value) is dict and len(value) > 1:
            _sort_keys(value)  # labels or annotations added here
    _fix_level(obj, seq)


def _fix_level(obj: dict[str, Any], seq: _Sequence) -> None:
    """omitempty and Go order for one object whose values below are already done."""
    # Every value omitempty drops is falsy (None included): one C-level scan usually settles it.
    dropped = False
    if seq.omits and not all(obj.values()):
        for key, omit in seq.omits:
            value = obj[key]
            if value is None if omit == DROP_NULL else not value:
                del obj[key]
                dropped = True
    if seq.order is not None:
        order = seq.order if not dropped else tuple(k for k in seq.order if k in obj)
        items = [(k, obj[k]) for k in order]
        obj.clear()
        obj.update(items)


def _sort_keys(mapping: dict[str, Any]) -> None:
    """Go writes map keys sorted (byte order of UTF-8, which is code point order)."""
    keys = list(mapping)
    ordered = sorted(keys)
    if keys != ordered:
        items = [(k, mapping[k]) for k in ordered]
        mapping.clear()
        mapping.update(items)
