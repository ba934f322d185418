"""Secrets: type Opaque by default and then fixed, stringData folded into data, per-type keys.

`stringData` is merged into `data` (base64 of its UTF-8, winning over a data entry of the same
key) and dropped, as v1→internal conversion does; a `data` value that is not base64 fails the
request as upstream's JSON decoding does (400). Validation: config-map keys, 1 MiB of decoded
data, the keys each well-known type needs, `type` immutable, `immutable: true` freezing data.
"""

from __future__ import annotations

import base64
import binascii
import json

from apiserver import errors, validation as v
from apiserver.kinds import configmap
from apiserver.kinds.defaulting import DefaultingStrategy
from apiserver.strategy import Causes, Obj

_REQUIRED_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}
_BASE64 = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def base64_error(value: str) -> int | None:
    """Where Go's base64.StdEncoding stops on `value` (the byte offset it reports), or None if it decodes."""
    text = value.replace("\r", "").replace("\n", "")
    for i, ch in enumerate(text):
        if ch == "=":
            if i % 4 < 2:
                return i
            end = i + 1
            if i % 4 == 2:
                if end == len(text):
                    return end  # "==" expected, input ended
                if text[end] != "=":
                    return i
                end += 1
            return end if end < len(text) else None  # anything after the padding is an error
        if ch not in _BASE64:
            return i
    return None if len(text) % 4 == 0 else len(text) - len(text) % 4


def _decoded(value: str) -> bytes:
    try:
        return base64.b64decode(value.replace("\r", "").replace("\n", ""), validate=True)
    except (binascii.Error, ValueError):
        return b""


class SecretStrategy(DefaultingStrategy):
    def default(self, obj: Obj) -> None:
        if not obj.get("type"):
            obj["type"] = "Opaque"
        for key, value in (obj.get("data") or {}).items():
            position = base64_error(value or "")
            if position is not None:
                raise errors.bad_request(f'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte {position}')
        string_data = obj.pop("stringData", None)
        if string_data:
            data = obj.get("data") or {}
            for key, value in string_data.items():
                data[key] = base64.b64encode((value or "").encode()).decode()
            obj["data"] = data

    def validate(self, obj: Obj) -> Causes:
        causes = super().validate(obj)
        data = obj.get("data") or {}
        total = 0
        for key, value in data.items():
            causes += [v.invalid(f"data[{key}]", key, m) for m in v.config_map_key(key)]
            total += len(_decoded(value or ""))
        if total > configmap.MAX_SIZE:
            causes.append(v.too_long("data", configmap.MAX_SIZE))
        kind = obj.get("type")
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if kind == "kubernetes.io/service-account-token" and not annotations.get("kubernetes.io/service-account.name"):
            causes.append(v.required("metadata.annotations[kubernetes.io/service-account.name]"))
        elif kind == "kubernetes.io/basic-auth" and "username" not in data and "password" not in data:
            causes += [v.required("data[username]"), v.required("data[password]")]
        elif kind in _REQUIRED_KEYS:
            for key in _REQUIRED_KEYS[kind]:
                if key not in data or (kind == "kubernetes.io/ssh-auth" and not _decoded(data[key])):
                    causes.append(v.required(f"data[{key}]"))
                elif kind in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
                    try:
                        json.loads(_decoded(data[key]) or b"")
                    except ValueError as exc:
                        causes.append(v.invalid(f"data[{key}]", "<secret contents redacted>", str(exc)))
        return causes

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = v.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        causes += v.immutable("type", new.get("type", ""), old.get("type", ""))
        return causes + configmap.immutability(new, old, ("data",)) + self.validate(new)
