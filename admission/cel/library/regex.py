"""Kubernetes `regex` library: `<string>.find(re)` and `<string>.findAll(re[, limit])`.

Matching uses Python's `re` on the RE2 patterns Kubernetes expects (the common syntax is the
same; RE2-only or Python-only constructs are not translated). findAll follows Go's
FindAllString: empty matches right after a previous match are skipped, and a negative limit
means all. Compiled patterns are cached. Registered by `admission.cel.library`.
"""

from __future__ import annotations

import functools
import re

from cel_expr_python import cel

from admission.cel.library import spec
from admission.cel.library.failure import LibraryError

T = cel.Type


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise LibraryError(f"Illegal regex: error parsing regexp: {err}") from None


def _find(text: str, pattern: str) -> str:
    match = _compile(pattern).search(text)
    return match.group() if match else ""


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    compiled = _compile(pattern)
    found: list[str] = []
    pos, previous_end = 0, -1
    while pos <= len(text) and (limit < 0 or len(found) < limit):
        match = compiled.search(text, pos)
        if match is None:
            break
        start, end = match.span()
        if start == end:
            if start != previous_end:
                found.append("")
            pos = end + 1
        else:
            found.append(match.group())
            pos = end
        previous_end = end
    return found


OVERLOADS = [
    ("find", spec.overload("string_find_string", T.STRING, [T.STRING, T.STRING],
                          is_member=True, impl=_find)),
    ("findAll", spec.overload("string_find_all_string", T.List(T.STRING), [T.STRING, T.STRING],
                             is_member=True, impl=find_all)),
    ("findAll", spec.overload("string_find_all_string_int", T.List(T.STRING),
                             [T.STRING, T.STRING, T.INT], is_member=True, impl=find_all)),
]
