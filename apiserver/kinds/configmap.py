"""ConfigMaps: valid keys, no key in both data and binaryData, 1 MiB in all, `immutable`.

Once `immutable: true` is stored, data and binaryData may not change and the flag may not be
unset, with upstream's "field is immutable when `immutable` is set". binaryData values are
base64 in JSON; their decoded size counts. Upstream: ValidateConfigMap(Update).
"""

from __future__ import annotations

import base64
import binascii

from apiserver import validation as v
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj

MAX_SIZE = 1024 * 1024
IMMUTABLE_SET = "field is immutable when `immutable` is set"


def decoded_length(value: str) -> int:
    try:
        return len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError, TypeError):
        return len(value or "")


def immutability(new: Obj, old: Obj, keys: tuple[str, ...]) -> Causes:
    if old.get("immutable") is not True:
        return []
    causes: Causes = []
    if new.get("immutable") is not True:
        causes.append(v.forbidden("immutable", IMMUTABLE_SET))
    for key in keys:
        if (new.get(key) or {}) != (old.get(key) or {}):
            causes.append(v.forbidden(key, IMMUTABLE_SET))
    return causes


class ConfigMapStrategy(DefaultingStrategy):
    def validate(self, obj: Obj) -> Causes:
        causes = super().validate(obj)
        data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
        total = 0
        for key, value in data.items():
            causes += [v.invalid(f"data[{key}]", key, m) for m in v.config_map_key(key)]
            if key in binary:
                causes.append(v.invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
            total += len((value or "").encode())
        for key, value in binary.items():
            causes += [v.invalid(f"binaryData[{key}]", key, m) for m in v.config_map_key(key)]
            total += decoded_length(value)
        if total > MAX_SIZE:
            causes.append(v.too_long("", MAX_SIZE))
        return causes

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes + immutability(new, old, ("data", "binaryData")) + self.validate(new)
