"""The Kubernetes v1.36 JSON schemas, loaded once from the `kubernetes-validate` package.

Owns the one in-memory copy of the 771 1.36 definitions (`_definitions.json`, v1.36.0-local) and
the map from group/version/kind to a definition name. Callers: the OpenAPI v3 documents
(`openapi.py`), strategic merge patch (merge keys and strategies) and schema validation.
Definitions are returned as they are stored; `resolve()` follows one `$ref`; `remembered()` is
how the per-write walks (server-side apply, pruning) keep what they work out about a node.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any, Callable, TypeVar

import kubernetes_validate

SCHEMA_VERSION = "v1.36.0-local"
_REF_PREFIX = "#/$defs/"


def schema_dir() -> str:
    return os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema", SCHEMA_VERSION)


@functools.cache
def definitions() -> dict[str, dict[str, Any]]:
    """Every 1.36 definition by its name, e.g. `io.k8s.api.core.v1.Pod`."""
    with open(os.path.join(schema_dir(), "_definitions.json"), "rb") as f:
        return json.load(f)["$defs"]


@functools.cache
def _names_by_gvk() -> dict[tuple[str, str, str], str]:
    names: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            # meta/v1 kinds such as DeleteOptions are listed under many groups; keep the first.
            names.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return names


def name_for_kind(group: str, version: str, kind: str) -> str | None:
    """The definition name of a top-level kind, or None when 1.36 has no schema for it."""
    return _names_by_gvk().get((group, version, kind))


def for_kind(group: str, version: str, kind: str) -> dict[str, Any] | None:
    name = name_for_kind(group, version, kind)
    return definitions()[name] if name else None


def ref_name(node: dict[str, Any]) -> str | None:
    """The definition a `{"$ref": "#/$defs/NAME"}` node points at, or None for an inline node."""
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        return ref[len(_REF_PREFIX):]
    return None


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    """Follow a `$ref` (also one wrapped in `allOf`, as some definitions are) to its definition."""
    name = ref_name(node)
    if name is None and len(node.get("allOf", ())) == 1:
        name = ref_name(node["allOf"][0])
    return definitions()[name] if name else node


T = TypeVar("T")
MEMO_LIMIT = 50_000  # entries per table before it starts afresh (old CRD schemas)


def remembered(table: dict[Any, tuple[Any, Any]], node: Any, key: Any, compute: Callable[[], T]) -> T:
    """What `compute()` says of schema node `node`, worked out once: `table[key]` keeps it.

    Schema nodes never change once loaded (a CRD update brings new ones), so an answer can be
    keyed by the node's identity (`key` holds `id(node)`). Each entry keeps its node alive, so an
    id is never reused while remembered; a table past MEMO_LIMIT entries starts afresh.
    """
    hit = table.get(key)
    if hit is not None and hit[0] is node:
        return hit[1]  # type: ignore[no-any-return]
    value = compute()
    if len(table) >= MEMO_LIMIT:
        table.clear()
    table[key] = (node, value)
    return value
