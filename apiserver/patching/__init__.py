"""The four PATCH types as pure functions over JSON-shaped dicts, and the one error they raise.

Owns `PatchError` (what went wrong, plus the HTTP code, reason and Status message kube-apiserver
answers with) and `decode_body`, the JSON decoding every patch parser shares, with Go's
`encoding/json` wording for syntax errors. The patch handler (`apiserver/handlers/patch.py`)
parses the body with `<type>.parse(body)`, applies it with `<type>.apply(...)` inside the retrying
update, and turns a `PatchError` into a Status. Nothing here knows HTTP or storage.
Modules: `json_patch` (RFC 6902), `merge_patch` (RFC 7386), `strategic_merge`, `apply_merge`.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["GENERIC_422_MESSAGE", "PatchError", "decode_body"]

# Status.message of errors.NewGenericServerResponse(422, ...): the detailed text is not sent.
GENERIC_422_MESSAGE = "the server rejected our request due to an error in our request"


class PatchError(Exception):
    """A patch that cannot be applied, with the Status upstream answers it with.

    `message` is the library's own text (evanphx/json-patch or strategicpatch), `code`/`reason`/
    `status_message`/`details` are the fields of the Status kube-apiserver sends for it:
      400 BadRequest    errors.NewBadRequest(message): undecodable bodies, bad directive formats
      413 RequestEntityTooLarge  errors.NewRequestEntityTooLargeError: more than 10000 JSON patch ops
      422 Invalid       errors.NewGenericServerResponse(422): a JSON patch op that does not apply;
                        the message is the generic sentence and details is `{}`
      500 (reason "")   a plain Go error returned by StrategicMergeMapPatch (ErrorToAPIStatus)
    """

    def __init__(
        self,
        message: str,
        *,
        code: int = 422,
        reason: str = "Invalid",
        status_message: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.reason = reason
        self.status_message = message if status_message is None else status_message
        self.details = details

    @classmethod
    def bad_request(cls, message: str) -> PatchError:
        return cls(message, code=400, reason="BadRequest")

    @classmethod
    def unprocessable(cls, message: str) -> PatchError:
        return cls(message, code=422, reason="Invalid", status_message=GENERIC_422_MESSAGE, details={})

    @classmethod
    def internal(cls, message: str) -> PatchError:
        # StatusReasonUnknown is the empty string; the message is the bare Go error.
        return cls(message, code=500, reason="")

    @classmethod
    def too_large(cls, message: str) -> PatchError:
        return cls(message, code=413, reason="RequestEntityTooLarge",
                   status_message=f"Request entity too large: {message}")


def decode_body(body: bytes) -> Any:
    """Decode a JSON request body; raise ValueError carrying Go's `encoding/json` message."""
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError:
        raise ValueError(go_syntax_error(body)) from None


def go_kind(value: Any) -> str:
    """The JSON kind Go's UnmarshalTypeError names (`json: cannot unmarshal <kind> into ...`)."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"


def go_syntax_error(body: bytes) -> str:
    """The message Go's JSON scanner (checkValid) gives for invalid input, e.g.
    `invalid character 'x' looking for beginning of value` or `unexpected end of JSON input`."""
    scanner = _GoScanner(body)
    try:
        scanner.document()
    except _ScanError as err:
        return str(err)
    # msgspec refused something Go accepts (for example invalid UTF-8 inside a string).
    return "invalid JSON input"


class _ScanError(Exception):
    pass


def _quote_char(c: int) -> str:
    # encoding/json quoteChar: '\'' and '"' are special, everything else strconv.Quote'd.
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    text = msgspec.json.encode(chr(c)).decode()[1:-1] if c < 0x80 else chr(c)
    return f"'{text}'"


class _GoScanner:
    """Just enough of Go's encoding/json scanner to name the first syntax error the way it does."""

    _WS = b" \t\r\n"

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _peek(self) -> int | None:
        return self.data[self.pos] if self.pos < len(self.data) else None

    def _next(self) -> int:
        c = self._peek()
        if c is None:
            raise _ScanError("unexpected end of JSON input")
        self.pos += 1
        return c

    def _skip_ws(self) -> None:
        while self.pos < len(self.data) and self.data[self.pos] in self._WS:
            self.pos += 1

    def _fail(self, c: int, context: str) -> _ScanError:
        return _ScanError(f"invalid character {_quote_char(c)} {context}")

    def document(self) -> None:
        self._skip_ws()
        self.value()
        self._skip_ws()
        c = self._peek()
        if c is not None:
            raise self._fail(c, "after top-level value")

    def value(self) -> None:
        self._skip_ws()
        c = self._next()
        if c == ord("{"):
            self._object()
        elif c == ord("["):
            self._array()
        elif c == ord('"'):
            self._string()
        elif c == ord("-") or ord("0") <= c <= ord("9"):
            self._number(c)
        elif c in (ord("t"), ord("f"), ord("n")):
            self._literal(c)
        else:
            raise self._fail(c, "looking for beginning of value")

    def _object(self) -> None:
        self._skip_ws()
        c = self._next()
        if c == ord("}"):
            return
        while True:
            if c != ord('"'):
                raise self._fail(c, "looking for beginning of object key string")
            self._string()
            self._skip_ws()
            c = self._next()
            if c != ord(":"):
                raise self._fail(c, "after object key")
            self.value()
            self._skip_ws()
            c = self._next()
            if c == ord("}"):
                return
            if c != ord(","):
                raise self._fail(c, "after object key:value pair")
            self._skip_ws()
            c = self._next()

    def _array(self) -> None:
        self._skip_ws()
        if self._peek() == ord("]"):
            self.pos += 1
            return
        while True:
            self.value()
            self._skip_ws()
            c = self._next()
            if c == ord("]"):
                return
            if c != ord(","):
                raise self._fail(c, "after array element")

    def _string(self) -> None:
        while True:
            c = self._next()
            if c == ord('"'):
                return
            if c == ord("\\"):
                e = self._next()
                if e == ord("u"):
                    for _ in range(4):
                        h = self._next()
                        if chr(h) not in "0123456789abcdefABCDEF":
                            raise self._fail(h, "in \\u hexadecimal character escape")
                elif chr(e) not in '"\\/bfnrt':
                    raise self._fail(e, "in string escape code")
            elif c < 0x20:
                raise self._fail(c, "in string literal")

    def _number(self, first: int) -> None:
        digits = b"0123456789"
        c: int | None = first
        if c == ord("-"):
            c = self._next()
            if c not in digits:
                raise self._fail(c, "in numeric literal")
        if c != ord("0"):
            while self._peek() is not None and self._peek() in digits:
                self.pos += 1
        c = self._peek()
        if c == ord("."):
            self.pos += 1
            c = self._next()
            if c not in digits:
                raise self._fail(c, "after decimal point in numeric literal")
            while self._peek() is not None and self._peek() in digits:
                self.pos += 1
            c = self._peek()
        if c in (ord("e"), ord("E")):
            self.pos += 1
            c = self._next()
            if c in (ord("+"), ord("-")):
                c = self._next()
            if c not in digits:
                raise self._fail(c, "in exponent of numeric literal")
            while self._peek() is not None and self._peek() in digits:
                self.pos += 1

    def _literal(self, first: int) -> None:
        word = {ord("t"): "true", ord("f"): "false", ord("n"): "null"}[first]
        for expected in word[1:]:
            c = self._next()
            if c != ord(expected):
                raise self._fail(c, f"in literal {word} (expecting '{expected}')")
