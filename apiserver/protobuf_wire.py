"""Protocol-buffer wire primitives: varints, tags, length-delimited spans, skipping unknown fields.

Owns the byte-level rules of the protobuf encoding and the one error type of the decoder,
`DecodeError`. Knows nothing about Kubernetes: the table-driven walker in `protobuf.py` calls
these for every field and turns the values into JSON. Positions are indexes into one `bytes`
buffer, so nested messages are read in place, never copied.
"""

from __future__ import annotations

import struct

VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
START_GROUP = 3
END_GROUP = 4
FIXED32 = 5

_MAX_VARINT_BYTES = 10
DOUBLE_LE = struct.Struct("<d")
FLOAT_LE = struct.Struct("<f")  # also used to find a float32's shortest text


class DecodeError(ValueError):
    """The body is not a well-formed Kubernetes protobuf message (or names a kind we do not know)."""


def read_varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Read an unsigned varint at `pos`; return (value, next position). At most 10 bytes, as protobuf says."""
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise DecodeError(f"truncated varint at byte {start}")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            # A 10th byte may only carry the top bit of a 64-bit value; keep the value in 64 bits.
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7
        if pos - start >= _MAX_VARINT_BYTES:
            raise DecodeError(f"varint longer than {_MAX_VARINT_BYTES} bytes at byte {start}")


def read_span(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    """Read a length prefix at `pos`; return (start, stop) of the payload, checked against `end`."""
    length, start = read_varint(buf, pos, end)
    stop = start + length
    if stop > end:
        raise DecodeError(f"length {length} at byte {pos} runs past the end of its message (byte {end})")
    return start, stop


def int32(value: int) -> int:
    """A varint as protobuf int32: the low 32 bits, two's complement (negatives arrive as 10 bytes)."""
    value &= 0xFFFFFFFF
    return value - 0x100000000 if value & 0x80000000 else value


def int64(value: int) -> int:
    """A varint as protobuf int64: two's complement, not zigzag (k8s protos use no sint types)."""
    return value - 0x10000000000000000 if value & 0x8000000000000000 else value


def uint32(value: int) -> int:
    return value & 0xFFFFFFFF


def read_double(buf: bytes, pos: int, end: int) -> tuple[float, int]:
    if pos + 8 > end:
        raise DecodeError(f"truncated 64-bit value at byte {pos}")
    return DOUBLE_LE.unpack_from(buf, pos)[0], pos + 8


def read_float(buf: bytes, pos: int, end: int) -> tuple[float, int]:
    if pos + 4 > end:
        raise DecodeError(f"truncated 32-bit value at byte {pos}")
    return FLOAT_LE.unpack_from(buf, pos)[0], pos + 4


def skip(buf: bytes, pos: int, end: int, wire_type: int, number: int) -> int:
    """Skip the value of an unknown field (tag already read); return the position after it."""
    if wire_type == VARINT:
        return read_varint(buf, pos, end)[1]
    if wire_type == LENGTH_DELIMITED:
        return read_span(buf, pos, end)[1]
    if wire_type == FIXED64:
        if pos + 8 > end:
            raise DecodeError(f"truncated 64-bit value of field {number} at byte {pos}")
        return pos + 8
    if wire_type == FIXED32:
        if pos + 4 > end:
            raise DecodeError(f"truncated 32-bit value of field {number} at byte {pos}")
        return pos + 4
    if wire_type == START_GROUP:
        # Deprecated groups: skip nested fields until the matching end-group tag.
        while True:
            if pos >= end:
                raise DecodeError(f"group of field {number} is not closed")
            key, pos = read_varint(buf, pos, end)
            inner_number, inner_type = key >> 3, key & 7
            if inner_type == END_GROUP:
                if inner_number != number:
                    raise DecodeError(f"group of field {number} closed by field {inner_number}")
                return pos
            pos = skip(buf, pos, end, inner_type, inner_number)
    if wire_type == END_GROUP:
        raise DecodeError(f"unexpected end-group tag for field {number} at byte {pos}")
    raise DecodeError(f"invalid wire type {wire_type} for field {number} at byte {pos}")
