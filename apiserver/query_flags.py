"""Boolean query parameters, read the way kube-apiserver reads them.

Go's query decoding (apimachinery's Convert_Slice_string_To_bool and its pointer twin) takes "0"
and any casing of "false" as false and every other value as true: "True", which the Python
client sends for its booleans, "1", "yes", even an empty `?watch=`. An absent parameter is unset.
A boolean is never rejected. Called by `requestinfo.py` (watch), `deletion.py` (orphanDependents)
and the patch (force) and watch (sendInitialEvents, allowWatchBookmarks) handlers.
"""

from __future__ import annotations

from collections.abc import Mapping


def flag(query: Mapping[str, str], name: str) -> bool | None:
    raw = query.get(name)
    if raw is None:
        return None
    return not (raw == "0" or raw.lower() == "false")


def enabled(query: Mapping[str, str], name: str) -> bool:
    """The parameter as a plain Go bool: unset is false."""
    return bool(flag(query, name))
