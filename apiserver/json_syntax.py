"""Go's encoding/json syntax errors, for a request body our decoder refused.

kube-apiserver finds a body's apiVersion/kind with Go's `json.Unmarshal`, so a malformed body gets
that scanner's words ("invalid character 'x' looking for beginning of object key string",
"unexpected end of JSON input") inside its BadRequest. msgspec says the same things differently;
`bodies.py` calls `error_of(body)` only after msgspec failed, so valid bodies never pay for this
walk. It mirrors the scanner's states closely enough to name the same character and the same step.
"""

from __future__ import annotations

_WHITESPACE = b" \t\r\n"
END = "unexpected end of JSON input"


class _Syntax(Exception):
    pass


def quote_char(c: int) -> str:
    """How Go's scanner quotes the offending byte: 'x', '\\'', '"', or a Go-escaped control byte."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    if c < 0x20 or c == 0x7F:
        named = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v"}
        return "'" + named.get(c, f"\\x{c:02x}") + "'"
    if c >= 0x80:
        return "'" + bytes([c]).decode("latin-1") + "'"
    return "'" + chr(c) + "'"


def error_of(body: bytes) -> str | None:
    """The message Go's json.Unmarshal gives for `body`, or None when Go would parse it."""
    deep = _too_deep(body)
    if deep is not None:
        return deep
    try:
        pos = _value(body, _skip(body, 0), "looking for beginning of value")
        pos = _skip(body, pos)
        if pos < len(body):
            _fail(body[pos], "after top-level value")
    except _Syntax as exc:
        return str(exc)
    except RecursionError:
        return None  # nested past what this walk follows: the caller keeps msgspec's own words
    return None


def _too_deep(buf: bytes) -> str | None:
    """Go's scanner refuses nesting past 10000 levels; this walk (recursive) would not get there."""
    depth, in_string, escaped = 0, False, False
    for c in buf:
        if in_string:
            if escaped:
                escaped = False
            elif c == 0x5C:  # backslash
                escaped = True
            elif c == 0x22:
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in b"[{":
            depth += 1
            if depth > MAX_DEPTH:
                return f"invalid character {quote_char(c)} exceeded max depth"
        elif c in b"]}":
            depth -= 1
    return None


MAX_DEPTH = 10000


def _fail(c: int, context: str) -> None:
    raise _Syntax(f"invalid character {quote_char(c)} {context}")


def _skip(buf: bytes, pos: int) -> int:
    while pos < len(buf) and buf[pos] in _WHITESPACE:
        pos += 1
    return pos


def _at(buf: bytes, pos: int) -> int:
    if pos >= len(buf):
        raise _Syntax(END)
    return buf[pos]


def _value(buf: bytes, pos: int, context: str) -> int:
    c = _at(buf, pos)
    if c == ord("{"):
        return _object(buf, pos + 1)
    if c == ord("["):
        return _array(buf, pos + 1)
    if c == ord('"'):
        return _string(buf, pos + 1)
    if c == ord("-") or ord("0") <= c <= ord("9"):
        return _number(buf, pos)
    for word in (b"true", b"false", b"null"):
        if c == word[0]:
            return _literal(buf, pos, word)
    _fail(c, context)
    raise AssertionError("unreachable")


def _object(buf: bytes, pos: int) -> int:
    pos = _skip(buf, pos)
    if _at(buf, pos) == ord("}"):
        return pos + 1
    while True:
        c = _at(buf, pos)
        if c != ord('"'):
            _fail(c, "looking for beginning of object key string")
        pos = _skip(buf, _string(buf, pos + 1))
        c = _at(buf, pos)
        if c != ord(":"):
            _fail(c, "after object key")
        pos = _skip(buf, _value(buf, _skip(buf, pos + 1), "looking for beginning of value"))
        c = _at(buf, pos)
        if c == ord("}"):
            return pos + 1
        if c != ord(","):
            _fail(c, "after object key:value pair")
        pos = _skip(buf, pos + 1)


def _array(buf: bytes, pos: int) -> int:
    pos = _skip(buf, pos)
    if _at(buf, pos) == ord("]"):
        return pos + 1
    while True:
        pos = _skip(buf, _value(buf, pos, "looking for beginning of value"))
        c = _at(buf, pos)
        if c == ord("]"):
            return pos + 1
        if c != ord(","):
            _fail(c, "after array element")
        pos = _skip(buf, pos + 1)


def _string(buf: bytes, pos: int) -> int:
    while True:
        c = _at(buf, pos)
        if c == ord('"'):
            return pos + 1
        if c < 0x20:
            _fail(c, "in string literal")
        if c == ord("\\"):
            e = _at(buf, pos + 1)
            if e == ord("u"):
                for k in range(pos + 2, pos + 6):
                    h = _at(buf, k)
                    if chr(h) not in "0123456789abcdefABCDEF":
                        _fail(h, "in \\u hexadecimal character escape")
                pos += 6
                continue
            if e not in b'"\\/bfnrt':
                _fail(e, "in string escape code")
            pos += 2
            continue
        pos += 1


def _digits(buf: bytes, pos: int) -> int:
    while pos < len(buf) and ord("0") <= buf[pos] <= ord("9"):
        pos += 1
    return pos


def _number(buf: bytes, pos: int) -> int:
    if buf[pos] == ord("-"):
        pos += 1
        c = _at(buf, pos)
        if not ord("0") <= c <= ord("9"):
            _fail(c, "in numeric literal")
    pos = pos + 1 if buf[pos] == ord("0") else _digits(buf, pos)
    if pos < len(buf) and buf[pos] == ord("."):
        c = _at(buf, pos + 1)
        if not ord("0") <= c <= ord("9"):
            _fail(c, "after decimal point in numeric literal")
        pos = _digits(buf, pos + 1)
    if pos < len(buf) and buf[pos] in b"eE":
        pos += 1
        if pos < len(buf) and buf[pos] in b"+-":
            pos += 1
        c = _at(buf, pos)
        if not ord("0") <= c <= ord("9"):
            _fail(c, "in exponent of numeric literal")
        pos = _digits(buf, pos)
    return pos


def _literal(buf: bytes, pos: int, word: bytes) -> int:
    for k in range(1, len(word)):
        c = _at(buf, pos + k)
        if c != word[k]:
            _fail(c, f"in literal {word.decode()} (expecting {quote_char(word[k])})")
    return pos + len(word)
