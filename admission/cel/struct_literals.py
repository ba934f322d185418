"""Rewrite `Object{…}`, `Object.spec.x{…}` and `JSONPatch{…}` into CEL map literals.

MutatingAdmissionPolicy expressions build objects with message syntax, but cel-expr-python has
no Python type provider, so before compiling, `rewrite()` turns `Object.spec{hostUsers: false}`
into `{"hostUsers": false}` (the type name becomes spaces, each field name gets quotes; strings
and comments are skipped). The result evaluates to the plain dict MAP needs. `Rewrite.original
_offset` maps a position in the new text back, so compile errors point into the user's text.
Called by `environment.Environment.compile` when object construction is on.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

ROOT_TYPES = ("Object", "JSONPatch")


@dataclass
class Rewrite:
    text: str
    # Offsets (in the rewritten text) where one character was inserted, ascending.
    insertions: list[int] = field(default_factory=list)

    def original_offset(self, offset: int) -> int:
        return offset - bisect.bisect_right(self.insertions, offset - 1)


def _skip_string(src: str, i: int) -> int:
    """Index just past the string literal whose opening quote (after any prefix) is at i."""
    j = i
    while src[j] in "rRbB":
        j += 1
    raw = "r" in src[i:j].lower()
    quote = src[j:j + 3] if src[j:j + 3] in ('"""', "'''") else src[j]
    j += len(quote)
    while j < len(src):
        if not raw and src[j] == "\\":
            j += 2
            continue
        if src.startswith(quote, j):
            return j + len(quote)
        j += 1
    return len(src)


def _is_ident_start(char: str) -> bool:
    return char.isascii() and (char.isalpha() or char == "_")


def _is_ident_char(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char == "_")


def _string_start(src: str, i: int) -> bool:
    j = i
    while j < len(src) and src[j] in "rRbB" and j - i < 2:
        j += 1
    return j < len(src) and src[j] in "'\"" and (j == i or not _is_ident_char(src[i - 1:i] or " "))


def rewrite(src: str) -> Rewrite:
    """The source with every Object/JSONPatch message literal turned into a map literal."""
    if not any(name in src for name in ROOT_TYPES):
        return Rewrite(src)
    out: list[str] = []
    insertions: list[int] = []
    # Stack of open brackets; True marks a brace that opened a rewritten message literal.
    stack: list[bool] = []
    expect_field = False
    i = 0
    length = len(src)
    while i < length:
        char = src[i]
        if char == "/" and src.startswith("//", i):
            end = src.find("\n", i)
            end = length if end == -1 else end
            out.append(src[i:end])
            i = end
            continue
        if _string_start(src, i) and (i == 0 or not _is_ident_char(src[i - 1])):
            end = _skip_string(src, i)
            out.append(src[i:end])
            i = end
            expect_field = False
            continue
        if _is_ident_start(char) and (i == 0 or not _is_ident_char(src[i - 1])):
            end = i
            while end < length and _is_ident_char(src[end]):
                end += 1
            word = src[i:end]
            if expect_field and stack and stack[-1]:
                after = end
                while after < length and src[after] in " \t\r\n":
                    after += 1
                if after < length and src[after] == ":":
                    insertions.append(len("".join(out)))
                    out.append(f'"{word}"')
                    insertions.append(len("".join(out)) - 1)
                    i = end
                    expect_field = False
                    continue
            previous = "".join(out).rstrip()
            if word in ROOT_TYPES and not previous.endswith("."):
                chain_end = end
                while True:
                    probe = chain_end
                    while probe < length and src[probe] in " \t\r\n":
                        probe += 1
                    if probe < length and src[probe] == "." and probe + 1 < length:
                        name_start = probe + 1
                        while name_start < length and src[name_start] in " \t\r\n":
                            name_start += 1
                        name_end = name_start
                        while name_end < length and _is_ident_char(src[name_end]):
                            name_end += 1
                        if name_end > name_start:
                            chain_end = name_end
                            continue
                    break
                probe = chain_end
                while probe < length and src[probe] in " \t\r\n":
                    probe += 1
                if probe < length and src[probe] == "{":
                    out.append(" " * (probe - i))
                    out.append("{")
                    stack.append(True)
                    expect_field = True
                    i = probe + 1
                    continue
            out.append(word)
            i = end
            expect_field = False
            continue
        if char in "([{":
            stack.append(False)
        elif char in ")]}":
            if stack:
                stack.pop()
        if char == "," and stack and stack[-1]:
            expect_field = True
        elif char == "?" and expect_field:
            pass  # an optional field `?name: value` keeps waiting for its name
        elif char not in " \t\r\n":
            expect_field = False
        out.append(char)
        i += 1
    return Rewrite("".join(out), insertions)
