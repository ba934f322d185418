"""Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`) → the object's JSON dict.

kubectl's `create …` generators, `auth can-i`, `create token`, helm and every client-go typed client
send built-in objects as b"k8s\\0" + runtime.Unknown{typeMeta, raw}. `decode()` reads the envelope,
finds the message for apiVersion/kind in the 1.36 field table (`protobuf_schema.py`) and walks the
wire, producing exactly the dict the same Go client would have sent as JSON: Go field names,
omitempty, pointers, inline structs, maps, base64 bytes, and the self-marshalling types of
`protobuf_specials.py`. Called by `bodies.py`; what it returns is treated like a decoded JSON body.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import msgspec

from apiserver import protobuf_schema as schema
from apiserver import protobuf_wire as wire
from apiserver.protobuf_schema import (BOOL, BYTES, DOUBLE, FLOAT, INT32, INT64, MAP, MESSAGE, STRING,
                                       UINT32, FieldPlan, MessagePlan)
from apiserver.protobuf_wire import DecodeError

__all__ = ["CONTENT_TYPE", "MAGIC", "DecodeError", "decode"]

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

_b64 = base64.b64encode
_json_decode = msgspec.json.decode


def decode(body: bytes) -> dict[str, Any]:
    """Decode one envelope into the object's JSON dict, with apiVersion and kind from its TypeMeta."""
    body = bytes(body)
    if not body.startswith(MAGIC):
        raise DecodeError(f"not a Kubernetes protobuf body: it must start with {MAGIC!r}, got {body[:4]!r}")
    try:
        return _decode_envelope(body, len(MAGIC), len(body))
    except RecursionError:
        raise DecodeError("protobuf body is nested too deeply") from None


def _decode_envelope(buf: bytes, pos: int, end: int) -> dict[str, Any]:
    api_version = kind = content_encoding = content_type = ""
    raw: tuple[int, int] | None = None
    while pos < end:
        number, wire_type, pos = _read_tag(buf, pos, end)
        if wire_type != wire.LENGTH_DELIMITED or number not in (1, 2, 3, 4):
            pos = wire.skip(buf, pos, end, wire_type, number)
            continue
        start, stop = wire.read_span(buf, pos, end)
        pos = stop
        if number == 1:
            api_version, kind = _read_type_meta(buf, start, stop)
        elif number == 2:
            raw = (start, stop)
        elif number == 3:
            content_encoding = _text(buf, start, stop)
        else:
            content_type = _text(buf, start, stop)
    if not api_version or not kind:
        raise DecodeError(f"protobuf envelope has no apiVersion/kind (got {api_version!r}/{kind!r})")
    if content_encoding:
        raise DecodeError(f"protobuf envelope content encoding {content_encoding!r} is not supported")
    if content_type not in ("", CONTENT_TYPE):
        raise DecodeError(f"protobuf envelope holds {content_type!r}, not a protobuf message")
    plan = schema.table().plan_for(api_version, kind)
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    if raw is None:
        raw = (end, end)  # an object whose every field is empty is still that object
    obj.update(_decode_object(plan, buf, raw[0], raw[1]))
    return obj


def _read_type_meta(buf: bytes, pos: int, end: int) -> tuple[str, str]:
    api_version = kind = ""
    while pos < end:
        number, wire_type, pos = _read_tag(buf, pos, end)
        if wire_type == wire.LENGTH_DELIMITED and number in (1, 2):
            start, pos = wire.read_span(buf, pos, end)
            if number == 1:
                api_version = _text(buf, start, pos)
            else:
                kind = _text(buf, start, pos)
        else:
            pos = wire.skip(buf, pos, end, wire_type, number)
    return api_version, kind


def _read_tag(buf: bytes, pos: int, end: int) -> tuple[int, int, int]:
    key = buf[pos]
    if key < 0x80:
        pos += 1
    else:
        key, pos = wire.read_varint(buf, pos, end)
    if key < 8:
        raise DecodeError(f"invalid field number 0 at byte {pos - 1}")
    wire_type = key & 7
    if wire_type > wire.FIXED32:
        raise DecodeError(f"invalid wire type {wire_type} for field {key >> 3} at byte {pos - 1}")
    return key >> 3, wire_type, pos


def _text(buf: bytes, start: int, stop: int) -> str:
    # Go keeps invalid UTF-8 in the string and its JSON encoder writes U+FFFD for it.
    return buf[start:stop].decode("utf-8", "replace")


def _decode_object(plan: MessagePlan, buf: bytes, pos: int, end: int) -> dict[str, Any]:
    """A generic message as a JSON object, with Go's omitempty, pointer and inline rules."""
    out: dict[str, Any] = {}
    fields = plan.fields
    spans: dict[int, list[tuple[int, int]]] = {}  # sub-messages, kept so repeats can be merged
    while pos < end:
        number, wire_type, pos = _read_tag(buf, pos, end)
        field = fields.get(number)
        if field is None or field.hidden:
            pos = wire.skip(buf, pos, end, wire_type, number)
            continue
        kind = field.kind
        if wire_type == wire.LENGTH_DELIMITED:
            length = buf[pos] if pos < end else 0x80
            if length < 0x80:
                start = pos + 1
                stop = start + length
                if stop > end:
                    raise DecodeError(f"length {length} of field {field.name or number} in {plan.name} "
                                      f"runs past the end of its message")
            else:
                start, stop = wire.read_span(buf, pos, end)
            pos = stop
            if kind == MESSAGE:
                if field.inline:
                    spans.setdefault(number, []).append((start, stop))
                    continue
                if field.repeated:
                    value = _decode_value(field.message, buf, start, stop)
                else:
                    seen = spans.get(number)
                    if seen is None:
                        spans[number] = [(start, stop)]
                        value = _decode_value(field.message, buf, start, stop)
                    else:
                        # A message field that occurs twice is the merge of both, as protobuf says.
                        seen.append((start, stop))
                        value = _decode_value(field.message, *_joined(buf, seen))
            elif kind == STRING:
                value = buf[start:stop].decode("utf-8", "replace")
            elif kind == MAP:
                key, value = _decode_map_entry(field, buf, start, stop)
                entries = out.get(field.name)
                if entries is None:
                    entries = out[field.name] = {}
                entries[key] = value
                continue
            elif kind == BYTES:
                value = _b64(buf[start:stop]).decode("ascii")
            elif field.repeated:
                out.setdefault(field.name, []).extend(_decode_packed(field, buf, start, stop))
                continue
            else:
                raise _wrong_wire_type(plan, field, wire_type)
        elif wire_type == field.wire_type:
            value, pos = _decode_scalar(field, buf, pos, end)
        else:
            raise _wrong_wire_type(plan, field, wire_type)

        if field.repeated:
            items = out.get(field.name)
            if items is None:
                out[field.name] = [value]
            else:
                items.append(value)
        elif value is None or (field.drops_zero and not value):
            # null (a zero Time, an empty RawExtension) or an omitempty zero: Go's JSON has no such key.
            out.pop(field.name, None)
        else:
            out[field.name] = value

    for field in plan.inline_fields:
        if field.number in spans:
            inlined = _decode_object(field.message, *_joined(buf, spans[field.number]))
        else:
            inlined = _decode_object(field.message, b"", 0, 0)
        for key, value in inlined.items():
            out.setdefault(key, value)  # the outer struct's own fields win, as in Go
    for field in plan.fill_scalars:
        if field.name not in out:
            out[field.name] = field.zero
    for field in plan.fill_messages:
        if field.number not in spans:
            value = _decode_value(field.message, b"", 0, 0)
            if value is not None:
                out[field.name] = value
    return out


def _joined(buf: bytes, seen: list[tuple[int, int]]) -> tuple[bytes, int, int]:
    if len(seen) == 1:
        return buf, seen[0][0], seen[0][1]
    joined = b"".join(buf[s:e] for s, e in seen)
    return joined, 0, len(joined)


def _decode_value(plan: MessagePlan, buf: bytes, pos: int, end: int) -> Any:
    """Any message as its JSON value: an object, an embedded document, or a special's own form."""
    if plan.mode == schema.GENERIC:
        return _decode_object(plan, buf, pos, end)
    fields = _decode_by_number(plan, buf, pos, end)
    if plan.mode == schema.RAW_JSON:
        return _embedded_json(fields.get(1, b""))
    return plan.special(fields)  # type: ignore[misc]


def _decode_by_number(plan: MessagePlan, buf: bytes, pos: int, end: int) -> dict[int, Any]:
    """A special message's fields by number: scalars plain, bytes raw, sub-messages as JSON."""
    out: dict[int, Any] = {}
    while pos < end:
        number, wire_type, pos = _read_tag(buf, pos, end)
        field = plan.fields.get(number)
        if field is None:
            pos = wire.skip(buf, pos, end, wire_type, number)
            continue
        if wire_type == wire.LENGTH_DELIMITED:
            start, pos = wire.read_span(buf, pos, end)
            if field.kind == MESSAGE:
                value = _decode_value(field.message, buf, start, pos)
            elif field.kind == STRING:
                value = _text(buf, start, pos)
            elif field.kind == BYTES:
                value = buf[start:pos]
            elif field.repeated:
                out.setdefault(number, []).extend(_decode_packed(field, buf, start, pos))
                continue
            else:
                raise _wrong_wire_type(plan, field, wire_type)
        elif wire_type == field.wire_type:
            value, pos = _decode_scalar(field, buf, pos, end)
        else:
            raise _wrong_wire_type(plan, field, wire_type)
        if field.repeated:
            out.setdefault(number, []).append(value)
        else:
            out[number] = value
    return out


def _embedded_json(raw: bytes) -> Any:
    """RawExtension, FieldsV1, apiextensions JSON: the bytes are a JSON document or a nested envelope."""
    if not raw:
        return None
    if raw.startswith(MAGIC):
        return _decode_envelope(raw, len(MAGIC), len(raw))
    try:
        return _json_decode(raw)
    except msgspec.DecodeError as exc:
        raise DecodeError(f"embedded object is neither JSON nor a protobuf envelope: {exc}") from None


def _decode_scalar(field: FieldPlan, buf: bytes, pos: int, end: int) -> tuple[Any, int]:
    kind = field.kind
    if kind == DOUBLE:
        number, pos = wire.read_double(buf, pos, end)
        return _go_float(number, field), pos
    if kind == FLOAT:
        number, pos = wire.read_float(buf, pos, end)
        # Go prints a float32 with the fewest digits that read back as the same float32.
        return _go_float(float(_shortest_float32(number)), field), pos
    value = buf[pos] if pos < end else 0x80
    if value < 0x80:
        pos += 1
    else:
        value, pos = wire.read_varint(buf, pos, end)
    if kind == INT32:
        return wire.int32(value), pos
    if kind == INT64:
        return wire.int64(value), pos
    if kind == BOOL:
        return value != 0, pos
    if kind == UINT32:
        return wire.uint32(value), pos
    return value, pos  # UINT64


def _go_float(number: float, field: FieldPlan) -> float | int:
    if not math.isfinite(number):
        raise DecodeError(f"field {field.name} is {number}, which JSON cannot carry")
    # Go's encoder writes 3.0 as 3; keep that shape so re-encoding gives the same JSON.
    if number.is_integer() and abs(number) < 1e21:
        return int(number)
    return number


def _shortest_float32(number: float) -> str:
    packed = wire.FLOAT_LE.pack(number)
    for digits in range(1, 10):
        text = f"{number:.{digits}g}"
        if wire.FLOAT_LE.pack(float(text)) == packed:
            return text
    return repr(number)


def _decode_packed(field: FieldPlan, buf: bytes, pos: int, end: int) -> list[Any]:
    """Packed repeated scalars: k8s protos never pack, but a reader must accept them."""
    if field.kind not in (INT32, INT64, UINT32, schema.UINT64, BOOL, DOUBLE, FLOAT):
        raise DecodeError(f"field {field.name} of kind {field.kind} cannot be packed")
    values = []
    while pos < end:
        value, pos = _decode_scalar(field, buf, pos, end)
        values.append(value)
    return values


def _decode_map_entry(field: FieldPlan, buf: bytes, pos: int, end: int) -> tuple[str, Any]:
    """One map entry {1 key, 2 value}; a missing key or value is its type's zero value."""
    key: Any = None
    value: Any = _MISSING
    while pos < end:
        number, wire_type, pos = _read_tag(buf, pos, end)
        if number not in (1, 2):
            pos = wire.skip(buf, pos, end, wire_type, number)
            continue
        kind = field.key_kind if number == 1 else field.value_kind
        if wire_type == wire.LENGTH_DELIMITED:
            start, pos = wire.read_span(buf, pos, end)
            if kind == STRING:
                item: Any = _text(buf, start, pos)
            elif kind == BYTES:
                item = _b64(buf[start:pos]).decode("ascii")
            elif kind == MESSAGE and number == 2:
                item = _decode_value(field.message, buf, start, pos)
            else:
                raise DecodeError(f"map {field.name} entry field {number} has wire type {wire_type}")
        elif wire_type == schema.WIRE_TYPES[kind]:
            item, pos = _decode_scalar(_MAP_SCALARS[kind], buf, pos, end)
        else:
            raise DecodeError(f"map {field.name} entry field {number} has wire type {wire_type}")
        if number == 1:
            key = item
        else:
            value = item
    if key is None:
        key = schema.ZEROS[field.key_kind]
    if value is _MISSING:
        if field.value_kind == MESSAGE:
            value = _decode_value(field.message, b"", 0, 0)
        else:
            value = schema.ZEROS[field.value_kind]
    # JSON object keys are strings; Go writes integer map keys in decimal.
    return (key if isinstance(key, str) else str(key)), value


_MISSING = object()
_MAP_SCALARS = {kind: FieldPlan([1, "", name, None, 0, 0, ""]) for name, kind in
                (("i32", INT32), ("i64", INT64), ("u32", UINT32), ("u64", schema.UINT64), ("bool", BOOL),
                 ("f64", DOUBLE), ("f32", FLOAT))}


def _wrong_wire_type(plan: MessagePlan, field: FieldPlan, wire_type: int) -> DecodeError:
    return DecodeError(f"field {field.name or field.number} of {plan.name} has wire type {wire_type}, "
                       f"expected {field.wire_type}")
