"""Read a KubeSchedulerConfiguration file as kube-scheduler's strict decoder does.

`read(path)` parses YAML or JSON (a syntax error names its line), checks apiVersion and kind
against the one served version, then walks the document against `schema.py`: a wrong type is
Go's `json: cannot unmarshal …` error, unknown fields are one `strict decoding error`. Each
`pluginConfig[].args` of a known args kind is decoded on its own, as upstream's
DecodeNestedObjects does, so its errors start with `decoding .profiles[i].pluginConfig[j]: `.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from scheduler.config import duration, schema
from scheduler.config.errors import ConfigError

GROUP = "kubescheduler.config.k8s.io"
VERSION = f"{GROUP}/v1"
KIND = "KubeSchedulerConfiguration"
_SCHEME = "pkg/scheduler/apis/config/scheme/scheme.go:31"
_INTS = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}


def read(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ConfigError(f"open {path}: {(exc.strerror or str(exc)).lower()}") from None
    return parse(data)


def parse(data: bytes) -> dict[str, Any]:
    doc = _load(data)
    if not isinstance(doc, dict):
        raise ConfigError("couldn't get version/kind; json parse error: json: cannot unmarshal "
                          f"{_json_kind(doc)} into Go value of type struct {{ APIVersion string "
                          '"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }')
    api_version, kind = doc.get("apiVersion") or "", doc.get("kind") or ""
    if not kind:
        raise ConfigError(f"Object 'Kind' is missing in '{_compact(doc)}'")
    if api_version != VERSION or kind != KIND:
        raise ConfigError(f'no kind "{kind}" is registered for version "{api_version}" in scheme "{_SCHEME}"')
    walk = _Walk()
    walk.value(doc, schema.CONFIGURATION, "", schema.CONFIGURATION.go_name, "")
    walk.raise_if_any("")
    nested: list[str] = []
    for i, profile in enumerate(doc.get("profiles") or []):
        for j, entry in enumerate((profile or {}).get("pluginConfig") or []):
            args_type = schema.ARGS.get((entry or {}).get("name", ""))
            args = (entry or {}).get("args")
            if args_type is None or args is None:
                continue
            where = f"decoding .profiles[{i}].pluginConfig[{j}]: "
            kind = args.get("kind") if isinstance(args, dict) else None
            if kind and kind != args_type.go_name:
                group = str(args.get("apiVersion") or "").rpartition("/")[0]
                raise ConfigError(f"{where}args for plugin {entry['name']} were not of type "
                                  f"{args_type.go_name}.{GROUP}, got {kind}.{group}")
            inner = _Walk()
            inner.value(args, args_type, "", args_type.go_name, "")
            if inner.type_errors:
                raise ConfigError(where + inner.type_errors[0])
            if inner.unknown:
                nested.append(where + inner.strict_message())
    if nested:
        raise ConfigError(", ".join(nested))
    return doc


def _load(data: bytes) -> Any:
    text = data.decode("utf-8", errors="replace")
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass  # YAML is a superset of JSON: let the YAML parser report it with its line
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(f"yaml: {_go_yaml_where(exc)}{_go_yaml_problem(exc)}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"yaml: {exc}") from None


def _go_yaml_where(exc: yaml.MarkedYAMLError) -> str:
    """go-yaml's "line N: ": marks are 0-based and only scanner errors add one (decode.go's fail)."""
    line = 0
    if exc.problem_mark is not None and exc.problem_mark.line:
        line = exc.problem_mark.line + (1 if isinstance(exc, yaml.scanner.ScannerError) else 0)
    elif exc.context_mark is not None and exc.context_mark.line:
        line = exc.context_mark.line
    return f"line {line}: " if line else ""


def _go_yaml_problem(exc: yaml.MarkedYAMLError) -> str:
    """PyYAML's wording -> libyaml's, which go-yaml (and so kube-scheduler) prints, for common slips."""
    problem, context = exc.problem or "", exc.context or ""
    if problem == "mapping values are not allowed here":
        return "mapping values are not allowed in this context"
    if problem.startswith("found character") and problem.endswith("that cannot start any token"):
        return "found character that cannot start any token"
    if problem.startswith("expected <block end>, but found"):
        if context == "while parsing a block collection":
            return "did not find expected '-' indicator"
        return "did not find expected key"
    if problem.startswith("expected the node content, but found"):
        return "did not find expected node content"
    return problem or context


def _compact(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"), default=str)


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


@dataclass
class _Walk:
    """One strict decode: Go's first type error wins; unknown fields are reported together."""

    type_errors: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    def strict_message(self) -> str:
        return "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in self.unknown)

    def raise_if_any(self, prefix: str) -> None:
        if self.type_errors:
            raise ConfigError(prefix + self.type_errors[0])
        if self.unknown:
            raise ConfigError(prefix + self.strict_message())

    def _type_error(self, value: Any, go_struct: str, dotted: str, go_type: str) -> None:
        what = _json_kind(value)
        if what == "number" and go_type in _INTS:
            what = f"number {value}"
        where = f"Go struct field {go_struct}.{dotted}" if dotted else "Go value"
        self.type_errors.append(f"json: cannot unmarshal {what} into {where} of type {go_type}")

    def value(self, value: Any, typ: schema.Type, path: str, go_struct: str, dotted: str) -> None:
        if value is None or typ == "any":
            return
        if isinstance(typ, schema.Struct):
            if not isinstance(value, dict):
                self._type_error(value, go_struct, dotted, f"v1.{typ.go_name}")
                return
            # sigs.k8s.io/yaml goes through a map, so fields arrive (and are reported) sorted.
            for key, item in sorted(value.items(), key=lambda kv: str(kv[0])):
                key = str(key)
                child = f"{path}.{key}" if path else key
                if key not in typ.fields:
                    self.unknown.append(child)
                    continue
                self.value(item, typ.fields[key], child, typ.go_name, f"{dotted}.{key}" if dotted else key)
        elif isinstance(typ, schema.ListOf):
            if not isinstance(value, list):
                self._type_error(value, go_struct, dotted, f"[]{_go_type(typ.item)}")
                return
            for i, item in enumerate(value):
                self.value(item, typ.item, f"{path}[{i}]", go_struct, dotted)
        elif isinstance(typ, schema.MapOf):
            if not isinstance(value, dict):
                self._type_error(value, go_struct, dotted, f"map[string]{_go_type(typ.value)}")
                return
            for key, item in value.items():
                self.value(item, typ.value, f"{path}[{key}]", go_struct, dotted)
        else:
            self._scalar(value, typ, go_struct, dotted)

    def _scalar(self, value: Any, typ: str, go_struct: str, dotted: str) -> None:
        if typ == "string":
            ok = isinstance(value, str)
        elif typ == "bool":
            ok = isinstance(value, bool)
        elif typ in _INTS:
            low, high = _INTS[typ]
            ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
        elif typ == "float32":
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif typ == "duration":
            if not isinstance(value, str):
                self._type_error(value, go_struct, dotted, "string")
                return
            try:
                duration.parse(value)
            except ValueError as exc:
                self.type_errors.append(str(exc))
            return
        else:  # pragma: no cover - the schema names only the types above
            raise AssertionError(typ)
        if not ok:
            self._type_error(value, go_struct, dotted, typ)


def _go_type(typ: schema.Type) -> str:
    if isinstance(typ, schema.Struct):
        return f"v1.{typ.go_name}"
    if isinstance(typ, schema.ListOf):
        return f"[]{_go_type(typ.item)}"
    if isinstance(typ, schema.MapOf):
        return f"map[string]{_go_type(typ.value)}"
    return typ
