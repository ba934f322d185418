"""What a DELETE answers per resource: the deleted object, or a Success Status.

kube-apiserver's generic store answers a finished DELETE with the object when the resource's
registry store sets `ReturnDeletedObject` (pods, services, DRA kinds, storage classes…) and with
`Status{Success, details}` otherwise; the store's flag is also what its OpenAPI declares as the
DELETE 200/202 type. Built-in facts come from `data/delete-answers-1.36.json`, derived from the
1.36 OpenAPI by `data/generate_delete_answers.py`. Custom resources answer Status (the CR store does
not set the flag; the CRD OpenAPI builder declares Status). `deletion.py` asks `returns_object`,
`openapi.py` asks `declares_object`.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from apiserver import registry

TABLE_PATH = os.path.join(os.path.dirname(__file__), "data", "delete-answers-1.36.json")
STATUS_MODEL = "V1Status"
# The namespace REST keeps its store (which sets ReturnDeletedObject) in a private field, so the
# OpenAPI sees no MayReturnFullObjectDeleter and says Status, yet the final delete answers the
# Namespace (pkg/registry/core/namespace/storage/storage.go). The one place server and spec differ.
_HIDDEN_RETURN_DELETED_OBJECT = frozenset({("", "namespaces")})


@functools.cache
def table() -> dict[str, Any]:
    with open(TABLE_PATH, encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def _key(info: registry.ResourceInfo) -> str:
    return f"{info.api_version}/{info.resource}"


def declares_object(info: registry.ResourceInfo) -> bool:
    """Whether upstream's OpenAPI gives the kind itself (not Status) as this DELETE's 200 and 202."""
    if not info.builtin:
        return False
    return table()["delete"].get(_key(info), STATUS_MODEL) != STATUS_MODEL


def returns_object(info: registry.ResourceInfo) -> bool:
    """Whether a DELETE that removed the object answers with it (else a Success Status)."""
    return declares_object(info) or (info.builtin and (info.group, info.resource) in _HIDDEN_RETURN_DELETED_OBJECT)
