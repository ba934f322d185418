"""The Kubernetes 1.36 protobuf field table, compiled once into per-message decoding plans.

Owns the one in-memory copy of `data/k8s-1.36-protobuf.json` (1243 messages from kubernetes/api,
apimachinery, apiextensions-apiserver, kube-aggregator and metrics; see
shared/reference/protobuf.md) and the lookup from an envelope's apiVersion/kind to a message.
`protobuf.py` walks the wire with these plans; the special JSON forms are `protobuf_specials.py`.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Callable

import msgspec

from apiserver import protobuf_specials, protobuf_wire

TABLE_PATH = os.path.join(os.path.dirname(__file__), "data", "k8s-1.36-protobuf.json")
_META_V1 = "k8s.io.apimachinery.pkg.apis.meta.v1"

# Field kinds, as small ints for a fast dispatch in the walker.
STRING, BYTES, INT32, INT64, UINT32, UINT64, BOOL, DOUBLE, FLOAT, MESSAGE, MAP = range(11)
_KINDS = {"s": STRING, "b": BYTES, "i32": INT32, "i64": INT64, "u32": UINT32, "u64": UINT64,
          "bool": BOOL, "f64": DOUBLE, "f32": FLOAT, "m": MESSAGE, "map": MAP}
WIRE_TYPES = {STRING: protobuf_wire.LENGTH_DELIMITED, BYTES: protobuf_wire.LENGTH_DELIMITED,
               MESSAGE: protobuf_wire.LENGTH_DELIMITED, MAP: protobuf_wire.LENGTH_DELIMITED,
               INT32: protobuf_wire.VARINT, INT64: protobuf_wire.VARINT, UINT32: protobuf_wire.VARINT,
               UINT64: protobuf_wire.VARINT, BOOL: protobuf_wire.VARINT,
               DOUBLE: protobuf_wire.FIXED64, FLOAT: protobuf_wire.FIXED32}
ZEROS: dict[int, Any] = {STRING: "", BYTES: "", INT32: 0, INT64: 0, UINT32: 0, UINT64: 0,
                          BOOL: False, DOUBLE: 0, FLOAT: 0}

# How a message turns into JSON.
GENERIC = 0     # an object: one key per field, Go omitempty rules
RAW_JSON = 1    # field 1 holds a JSON document (or a nested k8s\0 envelope)
SPECIAL = 2     # fields are collected by number, then one function of protobuf_specials maps them


class FieldPlan:
    __slots__ = ("number", "name", "kind", "wire_type", "message", "repeated", "pointer", "omit",
                 "inline", "hidden", "key_kind", "value_kind", "zero", "drops_zero")

    def __init__(self, row: list[Any]) -> None:
        number, name, kind, type_, repeated, pointer, flags = row
        self.number: int = number
        self.name: str = name
        self.kind: int = _KINDS[kind]
        self.wire_type: int = WIRE_TYPES[self.kind]
        self.repeated = bool(repeated)
        self.pointer = bool(pointer)
        self.omit = "o" in flags
        self.inline = "i" in flags
        self.hidden = "x" in flags  # json:"-": only special messages read such fields
        self.key_kind = self.value_kind = STRING
        # Linked by Table once every plan exists (message types are cyclic); scalars keep None.
        self.message: MessagePlan = None  # type: ignore[assignment]
        if self.kind == MAP:
            self.key_kind, self.value_kind = _KINDS[type_[0]], _KINDS[type_[1]]
        self.zero = ZEROS.get(self.kind)
        self.drops_zero = False  # set by MessagePlan.link: omitempty applies to this field's zero value


class MessagePlan:
    __slots__ = ("name", "fields", "mode", "special", "is_slice", "fill_scalars", "fill_messages",
                 "inline_fields")

    def __init__(self, name: str, spec: dict[str, Any]) -> None:
        self.name = name
        self.fields: dict[int, FieldPlan] = {row[0]: FieldPlan(row) for row in spec["f"]}
        kind = spec.get("sp")
        self.special: Callable[[dict[int, Any]], Any] | None = None
        self.is_slice = "alias" in spec
        if kind == "raw-json":
            self.mode = RAW_JSON
        elif self.is_slice:
            # ExtraValue and Verbs wrap a Go []string: their JSON is the list itself.
            self.mode, self.special = SPECIAL, protobuf_specials.alias_list
        elif kind in protobuf_specials.BY_NAME:
            self.mode, self.special = SPECIAL, protobuf_specials.BY_NAME[kind]
        else:
            self.mode = GENERIC  # includes the "plain" specials (Timestamp, TypeMeta, Unknown)
        self.fill_scalars: list[FieldPlan] = []
        self.fill_messages: list[FieldPlan] = []
        self.inline_fields: list[FieldPlan] = []

    def link(self) -> None:
        """Derive the Go JSON rules once every field knows its message plan."""
        for f in self.fields.values():
            # Go's omitempty drops zero scalars, strings, byte slices and wrapped slices; never structs.
            omittable = f.kind != MESSAGE or f.message.is_slice
            f.drops_zero = f.omit and not f.pointer and not f.repeated and omittable
        plain = [f for f in self.fields.values() if not f.repeated and not f.pointer and not f.hidden]
        # Go writes every non-pointer field; when another encoder leaves one out, the JSON a Go
        # client would have sent still has it: a scalar's zero, or the zero struct's own JSON
        # (a nil slice or byte slice is null or omitted, so those are not filled).
        self.fill_scalars = [f for f in plain if f.kind not in (MESSAGE, MAP, BYTES) and not f.omit]
        self.fill_messages = [f for f in plain if f.kind == MESSAGE and not f.inline and not f.message.is_slice]
        self.inline_fields = [f for f in plain if f.inline]


class Table:
    """The compiled table: plans by message name and the apiVersion/kind map."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.version: str = raw["version"]
        self.plans = {name: MessagePlan(name, spec) for name, spec in raw["messages"].items()}
        for spec_name, spec in raw["messages"].items():
            plan = self.plans[spec_name]
            for row in spec["f"]:
                field = plan.fields[row[0]]
                target = row[3][2] if field.kind == MAP else row[3]
                if target is not None:
                    if target not in self.plans:
                        raise RuntimeError(f"{TABLE_PATH}: {spec_name}.{row[1]} names unknown message {target}")
                    field.message = self.plans[target]
        for plan in self.plans.values():
            plan.link()
        self._gvk: dict[str, dict[str, str]] = raw["gvk"]
        self._group_package: dict[str, str] = raw["group_package"]
        self._without_proto = {(api_version, kind) for api_version, kind in raw["gvk_without_proto"]}
        # Fallbacks may only land on messages that are a kind somewhere, never on PodSpec or ObjectMeta.
        self._kind_messages = {name for kinds in self._gvk.values() for name in kinds.values()}

    def plan_for(self, api_version: str, kind: str) -> MessagePlan:
        """The message an envelope's apiVersion/kind names, by the rules of protobuf.md."""
        name = self._gvk.get(api_version, {}).get(kind)
        if name is None:
            group, _, version = api_version.rpartition("/")
            package = self._group_package.get(group)
            candidates = [f"{package}.{version}.{kind}"] if package else []
            # meta/v1 option kinds (DeleteOptions, CreateOptions, ...) are registered in every group version.
            candidates.append(f"{_META_V1}.{kind}")
            name = next((c for c in candidates if c in self._kind_messages), None)
        if name is None:
            if (api_version, kind) in self._without_proto:
                raise protobuf_wire.DecodeError(f"{kind} in {api_version} has no protobuf form; send it as JSON")
            raise protobuf_wire.DecodeError(f"no protobuf message is known for apiVersion {api_version!r}, kind {kind!r}")
        return self.plans[name]


@functools.cache
def table() -> Table:
    """Load and compile the table once per process (a few tens of milliseconds)."""
    with open(TABLE_PATH, "rb") as f:
        return Table(msgspec.json.decode(f.read()))
