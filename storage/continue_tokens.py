"""Continue tokens for paginated lists: an opaque string naming a revision and a resume point.

`storage/listing.py` makes one for every page that has more keys after it and parses the one a
caller passes back. The token is base64url of a small JSON object: the list's revision ("rv") and
the last key returned, relative to the listed prefix ("start"), the way kube-apiserver's etcd3
store makes its tokens. Anything that does not parse back is `InvalidContinue`.
"""

from __future__ import annotations

import base64
import binascii
from typing import NamedTuple

import msgspec

from storage import errors

_VERSION = 1


class ContinuePoint(NamedTuple):
    revision: int
    last_key: str  # relative to the listed prefix; the next page starts strictly after it


def encode(revision: int, last_key: str) -> str:
    payload = msgspec.json.encode({"v": _VERSION, "rv": revision, "start": last_key})
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def decode(token: str) -> ContinuePoint:
    if not isinstance(token, str) or not token:
        raise errors.InvalidContinue(str(token), "empty or not a string")
    try:
        padded = token + "=" * (-len(token) % 4)
        payload = msgspec.json.decode(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (UnicodeEncodeError, binascii.Error, ValueError, msgspec.DecodeError):
        raise errors.InvalidContinue(token, "not a continue token") from None
    if not isinstance(payload, dict) or payload.get("v") != _VERSION:
        raise errors.InvalidContinue(token, "not a continue token of this store")
    revision, last_key = payload.get("rv"), payload.get("start")
    if type(revision) is not int or revision < 1:
        raise errors.InvalidContinue(token, "bad revision")
    if not isinstance(last_key, str):
        raise errors.InvalidContinue(token, "bad start key")
    return ContinuePoint(revision, last_key)
