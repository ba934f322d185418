"""Shard selectors (KEP-5866) on the client: parse `shardRange(...) || ...` and test an object.

An informer given a shard selector sends it as `shardSelector=` and also keeps only the objects
this module says match, so it behaves the same against a server that ignores the parameter (the
gate off, or an older server). Matching is the server's: FNV-1a 64 of the field value, printed as
`0x` + 16 hex digits, inside [start, end) of any range. Used by `informer.Informer`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_FIELDS = ("object.metadata.uid", "object.metadata.namespace")
_RANGE = re.compile(r"\s*shardRange\(\s*([\w.]+)\s*,\s*'([^']*)'\s*,\s*'([^']*)'\s*\)\s*")
_BOUND = re.compile(r"0x[0-9a-f]{16}")
_TOP = "0x10000000000000000"  # 2^64, the only 17-digit bound


def fnv1a_64(text: str) -> int:
    value = 0xCBF29CE484222325
    for byte in text.encode():
        value ^= byte
        value = (value * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def _bound(text: str, selector: str) -> int:
    if text != _TOP and not _BOUND.fullmatch(text):
        raise ValueError(f"invalid shard selector {selector!r}: bound {text!r} must be '0x' and 16 lowercase hex digits")
    return int(text, 16)


@dataclass(frozen=True)
class ShardSelector:
    field: str
    ranges: tuple[tuple[int, int], ...]

    def matches(self, obj: dict[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        value = meta.get("uid" if self.field.endswith(".uid") else "namespace") or ""
        point = fnv1a_64(value)
        return any(start <= point < end for start, end in self.ranges)


def parse(selector: str) -> ShardSelector:
    field: str | None = None
    ranges = []
    for term in selector.split("||"):
        match = _RANGE.fullmatch(term)
        if not match:
            raise ValueError(f"invalid shard selector {selector!r}: expected shardRange(field, 'start', 'end') terms")
        name, start_text, end_text = match.groups()
        if name not in _FIELDS:
            raise ValueError(f"invalid shard selector {selector!r}: field must be one of {', '.join(_FIELDS)}")
        if field is not None and name != field:
            raise ValueError(f"invalid shard selector {selector!r}: every range must use the same field")
        field = name
        start, end = _bound(start_text, selector), _bound(end_text, selector)
        if start >= end:
            raise ValueError(f"invalid shard selector {selector!r}: start must be below end")
        ranges.append((start, end))
    assert field is not None
    return ShardSelector(field, tuple(ranges))
