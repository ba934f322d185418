"""One decode of a watch event's stored bytes, shared by every watcher that must look inside it.

A watch with a label or field selector has to decode each event to match it, and the previous
object of a MODIFIED too, to tell an object leaving the selection. With a scheduler, the
controllers and one kubelet per node watching pods through selectors, the same bytes were
decoded once per watcher. The table is keyed by the bytes themselves (hashing a few KB costs a
microsecond): the watchers of one commit read the very same `Event`s from the watch ring
(`storage/watch_hub.py`), and a MODIFIED event's previous bytes are the value of the event
before it for that key, which was decoded when that one went out. The objects handed out are
shared: callers only read them (`handlers/watch.py` matches selectors on them and sends the
stored bytes, decoding a private copy for anything it changes).
"""

from __future__ import annotations

from typing import Any

import msgspec

# A commit's events (value and previous value) go through every watcher one after another; the
# oldest entries leave first. A decoded Pod is some 10 KB, so this stays within ~10 MB.
CAPACITY = 1024

_decoded: dict[bytes, Any] = {}


def shared(value: bytes) -> Any:
    """`value` decoded, the same object for the same bytes; never modify it."""
    found = _decoded.get(value)
    if found is None:
        found = msgspec.json.decode(value)
        if len(_decoded) >= CAPACITY:
            del _decoded[next(iter(_decoded))]
        _decoded[value] = found
    return found
