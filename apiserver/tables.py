"""Server-side printing: `meta.k8s.io/v1` Tables, as kube-apiserver sends them for `as=Table`.

Owns the Table and TableRow shapes, `includeObject` (Metadata → a PartialObjectMetadata, Object →
the object itself, None → null), the list metadata, and the fallback: kinds without a printer get
k8s.io/apiserver's default table (`Name`, `Created At` as an RFC 3339 UTC date). Cells are always
built as for `-o wide`, as the server does; kubectl hides priority-1 columns itself. Callers: the
lead's LIST/GET/WATCH handlers (`render` for a list or one object, `row` for a watch event). The
per-kind printers live in `apiserver/printers/`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from apiserver.crds import printing as crd_printing
from apiserver.printers import by_resource, cells
from apiserver.printers.printer import Doc, Printer, col

human_duration = cells.human_duration

INCLUDE_METADATA = "Metadata"
INCLUDE_OBJECT = "Object"
INCLUDE_NONE = "None"
TABLE_API_VERSION = "meta.k8s.io/v1"


class TableOptionsError(ValueError):
    """A TableOptions value the server rejects (a 400 BadRequest with this message)."""


def _created_at(obj: Mapping[str, Any], now: datetime) -> list[Any]:
    created = cells.parse_time((obj.get("metadata") or {}).get("creationTimestamp"))
    when = (created or datetime(1, 1, 1, tzinfo=timezone.utc)).astimezone(timezone.utc)
    # strftime does not zero-pad year 1, Go's zero time; format the fields ourselves.
    stamp = f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{when.hour:02d}:{when.minute:02d}:{when.second:02d}Z"
    return [(obj.get("metadata") or {}).get("name", ""), stamp]


DEFAULT_PRINTER = Printer(
    (
        col("Name", Doc("meta.v1.ObjectMeta", "name"), format="name"),
        col("Created At", Doc("meta.v1.ObjectMeta", "creationTimestamp"), type="date"),
    ),
    _created_at,
)


def printer_for(group: str, resource: str) -> Printer:
    """The printer of a resource (any version), or the default Name/Created At one."""
    custom = crd_printing.printer(group, resource)  # a CRD's additionalPrinterColumns
    if custom is not None:
        return custom
    return by_resource().get((group, resource), DEFAULT_PRINTER)


def has_printer(group: str, resource: str) -> bool:
    return (group, resource) in by_resource()


def columns(group: str, resource: str) -> list[dict[str, Any]]:
    """The columnDefinitions of a resource's Table."""
    return [c.definition() for c in printer_for(group, resource).columns]


def _check_include(include_object: str) -> str:
    if include_object in ("", INCLUDE_METADATA):
        return INCLUDE_METADATA
    if include_object in (INCLUDE_OBJECT, INCLUDE_NONE):
        return include_object
    raise TableOptionsError(f'unrecognized includeObject value: "{include_object}"')


def _row_object(obj: Mapping[str, Any], include_object: str, api_version: str) -> dict[str, Any] | None:
    if include_object == INCLUDE_NONE:
        return None
    if include_object == INCLUDE_OBJECT:
        return dict(obj)
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version, "metadata": obj.get("metadata") or {}}


def _row(printer: Printer, obj: Mapping[str, Any], include_object: str, now: datetime, api_version: str) -> dict[str, Any]:
    item = dict(obj)
    out: dict[str, Any] = {"cells": printer.cells(item, now)}
    if printer.conditions is not None and (conditions := printer.conditions(item)):
        out["conditions"] = conditions
    # TableRow.object is a RawExtension without omitempty: "None" serializes as null.
    out["object"] = _row_object(obj, include_object, api_version)
    return out


def row(
    group: str,
    resource: str,
    obj: Mapping[str, Any],
    include_object: str = INCLUDE_METADATA,
    now: datetime | None = None,
    *,
    api_version: str = TABLE_API_VERSION,
) -> dict[str, Any]:
    """One TableRow (for a watch event, whose object is a one-row Table)."""
    return _row(
        printer_for(group, resource), obj, _check_include(include_object), now or datetime.now(timezone.utc), api_version
    )


def render(
    group: str,
    resource: str,
    objects: Iterable[Mapping[str, Any]],
    *,
    include_object: str = INCLUDE_METADATA,
    now: datetime | None = None,
    list_meta: Mapping[str, Any] | None = None,
    no_headers: bool = False,
    api_version: str = TABLE_API_VERSION,
) -> dict[str, Any]:
    """A whole Table for a list (or for one object: pass `[obj]` and its resourceVersion).

    `list_meta` carries the list's `resourceVersion`, `continue` and `remainingItemCount`; empty
    values are left out, as ListMeta's omitempty does. `no_headers` mirrors TableOptions.noHeaders
    (columnDefinitions then serialize as null). `api_version` is the negotiated Table version
    (`meta.k8s.io/v1`, or `meta.k8s.io/v1beta1` for old clients); rows' PartialObjectMetadata use it.
    """
    include = _check_include(include_object)
    moment = now or datetime.now(timezone.utc)
    printer = printer_for(group, resource)
    items = list(objects)
    if printer.order is not None:
        items = printer.order([dict(o) for o in items])
    metadata = {k: v for k, v in (list_meta or {}).items() if k in ("resourceVersion", "continue", "remainingItemCount") and v not in (None, "")}
    return {
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": metadata,
        "columnDefinitions": None if no_headers else [c.definition() for c in printer.columns],
        "rows": [_row(printer, o, include, moment, api_version) for o in items],
    }
