"""Tables for custom resources: Name, then the version's additionalPrinterColumns (default: Age).

Upstream's CRD table convertor: each column's JSONPath (`jsonpath.py`) is evaluated and the first
match becomes the cell — strings as JSONPath prints them, integers/numbers/booleans as JSON
values, dates as an age (`5m`), nothing found as null. `printer(group, resource)` is what
`tables.printer_for` asks first; columns come from the preferred served version, which is the
one `kubectl get` reads.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Mapping

from apiserver import registry
from apiserver.crds import jsonpath, served
from apiserver.crds.definition import Definition, Version
from apiserver.printers import cells
from apiserver.printers.printer import Column, Doc, Printer

NAME = Column("Name", format="name", description=Doc("meta.v1.ObjectMeta", "name"))
DEFAULT_COLUMNS = ({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},)

_cache: dict[tuple[str, str], tuple[Version, Printer]] = {}


def printer(group: str, resource: str) -> Printer | None:
    definition = served.lookup(group, resource)
    if definition is None:
        return None
    version = preferred_version(definition)
    if version is None:
        return None
    cached = _cache.get((group, resource))
    if cached is None or cached[0] is not version:
        cached = (version, build(version.columns))
        _cache[(group, resource)] = cached
    return cached[1]


def preferred_version(definition: Definition) -> Version | None:
    versions = sorted(definition.served_versions, key=lambda v: registry.version_priority(v.name))
    return versions[0] if versions else None


def build(columns: tuple[Mapping[str, Any], ...]) -> Printer:
    specs = tuple(columns) or DEFAULT_COLUMNS
    defined = (NAME,) + tuple(
        Column(str(c.get("name", "")), type=str(c.get("type", "string")), format=str(c.get("format", "")),
               priority=int(c.get("priority", 0) or 0), description=str(c.get("description", "")))
        for c in specs)

    def row(obj: dict[str, Any], now: datetime) -> list[Any]:
        out: list[Any] = [cells.name(obj)]
        for spec in specs:
            out.append(_cell(obj, spec, now))
        return out

    return Printer(defined, row)


def _cell(obj: dict[str, Any], spec: Mapping[str, Any], now: datetime) -> Any:
    try:
        found = jsonpath.find(obj, str(spec.get("jsonPath", "")))
    except ValueError:
        return None
    if not found:
        return None
    value = found[0]
    kind = spec.get("type", "string")
    if kind == "string":
        return _text(value)
    if value is None:
        return None
    if kind == "integer":
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == "number":
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "date":
        if not isinstance(value, str):
            return None
        return cells.since(value, now) if cells.parse_time(value) is not None else "<invalid>"
    return None


def _text(value: Any) -> str:
    """A value as kubectl's JSONPath printer writes it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "<nil>"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)
