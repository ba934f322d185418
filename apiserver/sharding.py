"""Sharded list and watch (KEP-5866): the `shardSelector` grammar, FNV-1a 64 and the shard filter.

`parse(text)` reads a selector as kube-apiserver's parser does: the text is CEL syntax, parsed but
never evaluated, and may hold only `shardRange(field, 'start', 'end')` calls joined by `||`; every
other shape fails with upstream's message, wrapped as "invalid shard selector: …" (a 400). An object
matches when FNV-1a 64 of its `metadata.uid` (or `metadata.namespace`) lies in `[start, end)`.
`listing.py` asks `from_query` once per LIST or WATCH; `handlers/watch.py` runs the filter's
`select` over every batch of events. Hashes are memoized per store by (key, revision), so one write is hashed once, not per watcher.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from apiserver import errors

GATE = "ShardedListAndWatch"
PARAMETER = "shardSelector"
UID = "object.metadata.uid"
NAMESPACE = "object.metadata.namespace"
FIELDS = (UID, NAMESPACE)
TOP = "0x10000000000000000"  # 2^64, the one bound with 17 digits (an exclusive upper end)


class SelectorError(errors.APIError):
    """A selector the parser refused: 400 BadRequest, "invalid shard selector: <upstream text>"."""

    def __init__(self, message: str) -> None:
        super().__init__(400, "BadRequest", f"invalid shard selector: {message}")
        self.detail = message


# -- FNV-1a 64 ------------------------------------------------------------------------------------

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


def fnv1a64_python(data: bytes) -> int:
    """FNV-1a, 64 bits (Go's hash/fnv New64a), over `data`, in plain Python (~2.2 µs for a uid)."""
    h = _FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    return h


try:  # the same function in C (fnv-c, ~0.2 µs for a uid); the tests check both on the FNV vectors
    from fnv_c import fnv1a_64 as fnv1a64
except ImportError:  # pragma: no cover - fnv-c is a dependency; keep working without it
    fnv1a64 = fnv1a64_python


def hash_text(value: str) -> int:
    # Go hashes the string's UTF-8 bytes; a lone surrogate (impossible in a real uid) must not crash.
    return fnv1a64(value.encode("utf-8", "surrogatepass"))


def hex_hash(value: str) -> str:
    """The hash as upstream compares it: "0x" and 16 lowercase hex digits."""
    return f"0x{hash_text(value):016x}"


# -- the selector ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ShardRange:
    field: str
    start: str  # canonical text: "0x" + 16 lowercase hex digits, or TOP
    end: str

    @property
    def bounds(self) -> tuple[int, int]:
        return int(self.start, 16), int(self.end, 16)

    def __str__(self) -> str:
        return f"shardRange({self.field}, '{self.start}', '{self.end}')"


class Selector:
    """One or more ranges over one field; an object matches when its hash is in any of them."""

    __slots__ = ("field", "ranges", "bounds")

    def __init__(self, ranges: tuple[ShardRange, ...]) -> None:
        if not ranges:
            raise ValueError("a shard selector needs at least one range")
        self.field = ranges[0].field
        self.ranges = ranges
        self.bounds = tuple(r.bounds for r in ranges)  # (low, high) integers, high exclusive

    def field_value(self, obj: Mapping[str, Any]) -> str:
        meta = obj.get("metadata") or {}
        value = meta.get("uid" if self.field == UID else "namespace")
        return value if isinstance(value, str) else ""

    def matches_hash(self, field_value_hash: int) -> bool:
        for low, high in self.bounds:
            if low <= field_value_hash < high:
                return True
        return False

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return self.matches_hash(hash_text(self.field_value(obj)))

    def __str__(self) -> str:
        # The canonical form, echoed in a list's metadata.shardInfo.selector.
        return " || ".join(str(r) for r in self.ranges)

    def __repr__(self) -> str:
        return f"sharding.parse({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selector) and self.ranges == other.ranges

    def __hash__(self) -> int:
        return hash(self.ranges)


def parse(text: str) -> Selector:
    """Parse a `shardSelector` value; raise `SelectorError` with upstream's message."""
    text = text.strip()
    if not text:
        raise SelectorError("empty shard selector is not allowed; omit the parameter for unfiltered lists")
    ranges = _ranges(_Parser(_tokens(text)).parse())
    for other in ranges[1:]:
        if other.field != ranges[0].field:
            raise SelectorError(
                f'all shard ranges must use the same field, got "{ranges[0].field}" and "{other.field}"')
    return Selector(tuple(ranges))


# -- from the CEL tree to ranges (upstream's walk and its messages) --------------------------------

def _ranges(root: _Node) -> list[ShardRange]:
    found: list[ShardRange] = []
    pending = [root]  # an explicit stack: a long `||` chain must not exhaust Python's recursion
    while pending:
        node = pending.pop()
        if node.kind == _CALL and node.name == "_||_":
            if len(node.args) != 2:
                raise SelectorError("|| operator requires exactly 2 arguments")
            pending.append(node.args[1])
            pending.append(node.args[0])
        elif node.kind == _CALL and node.name == "shardRange":
            found.append(_shard_range(node))
        elif node.kind == _CALL:
            raise SelectorError(f'unsupported function "{node.name}"; only shardRange() and || are allowed')
        else:
            raise SelectorError(f"unexpected expression kind {node.kind}; expected shardRange() call or || operator")
    return found


def _shard_range(call: _Node) -> ShardRange:
    # Like upstream, a receiver (`x.shardRange(...)`) is not looked at: only the arguments are.
    if len(call.args) != 3:
        raise SelectorError(f"shardRange() requires exactly 3 arguments, got {len(call.args)}")
    path = _field_path(call.args[0])
    if path not in FIELDS:
        raise SelectorError(f'unsupported field path "{path}"; supported: {UID}, {NAMESPACE}')
    start = _hex_literal(call.args[1], "hexStart")
    end = _hex_literal(call.args[2], "hexEnd")
    if (len(start), start) >= (len(end), end):  # canonical hex: a longer text is a larger number
        raise SelectorError(f"shard range start {start} must be less than end {end}")
    return ShardRange(path, start, end)


def _field_path(node: _Node) -> str:
    parts: list[str] = []
    while node.kind == _SELECT:
        parts.append(node.name)
        assert node.operand is not None
        node = node.operand
    if node.kind != _IDENT:
        raise SelectorError("shardRange() first argument: expected field path (e.g. object.metadata.uid), "
                            f"got expression kind {node.kind}")
    parts.append(node.name)
    return ".".join(reversed(parts))


_HEX_DIGITS = frozenset("0123456789abcdef")


def _hex_literal(node: _Node, name: str) -> str:
    if node.kind != _LITERAL:
        raise SelectorError(f"{name} must be a string literal (e.g. '0xff'), got expression kind {node.kind}")
    if not isinstance(node.value, str):
        raise SelectorError(f"{name} must be a string literal, got {node.go_type}")
    text = node.value
    if not text.startswith("0x"):
        raise SelectorError(f"{name} must have '0x' prefix, got {_go_quote(text)}")
    digits = text[2:]
    if not digits:
        raise SelectorError(f"{name}: hex value is required after '0x'")
    if len(digits) > 17:
        raise SelectorError(f"{name}: hex value too long ({len(digits)} chars, max 17): {_go_quote(digits)}")
    for char in digits:
        if char not in _HEX_DIGITS:
            raise SelectorError(f"{name}: invalid hex character {_go_quote(char)} in {_go_quote(text)}")
    if len(digits) == 17:
        if text != TOP:
            raise SelectorError(f"{name}: 17-digit hex value must be '{TOP}' (2^64), got {_go_quote(text)}")
    elif len(digits) != 16:
        padded = "0x" + digits.rjust(16, "0")
        raise SelectorError(f"{name} must be a 0x-prefixed 16-digit hex value, got {_go_quote(text)} "
                            f"(did you mean {_go_quote(padded)}?)")
    return text


def _go_quote(text: str) -> str:
    """Go's %q for the texts that reach a message (printable ASCII in practice)."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}" if ord(char) > 0xFF else f"\\x{ord(char):02x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


# -- a CEL parser, as far as the messages above need one --------------------------------------------
# Node kinds carry cel-go's ast.ExprKind numbers, because upstream prints them as numbers.
_LITERAL, _IDENT, _SELECT, _CALL, _LIST, _MAP, _STRUCT = 1, 2, 3, 4, 5, 6, 7
# cel-go stops at 250 nested expressions; each costs this parser about ten Python frames, so stop
# at 60 to stay far inside Python's recursion limit (no real selector nests more than twice).
_MAX_DEPTH = 60

_RESERVED = frozenset({"as", "break", "const", "continue", "else", "for", "function", "if", "import",
                       "let", "loop", "package", "namespace", "return", "var", "void", "while"})


@dataclass
class _Node:
    kind: int
    name: str = ""  # function, identifier or selected field
    args: tuple[_Node, ...] = ()
    operand: _Node | None = None  # a select's operand, a member call's receiver
    value: Any = None  # a literal's value
    go_type: str = ""  # a literal's Go type, as upstream's %T prints it


@dataclass
class _Token:
    kind: str  # "ident", "punct", "literal", "eof"
    text: str
    value: Any = None
    go_type: str = ""


_SPACE = re.compile(r"(?:[ \t\r\n\f]+|//[^\n]*)+")
_IDENT_RE = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+[uU]?|(\d+\.\d+|\d+(?=[eE])|\.\d+)([eE][+-]?\d+)?|\d+[uU]?")
_STRING_START = re.compile(r"([rR][bB]?|[bB][rR]?)?('''|\"\"\"|'|\")")
_PUNCTS = ("||", "&&", "==", "!=", "<=", ">=", "<", ">", "!", "-", "+", "*", "/", "%", "?", ":", ".",
           ",", "(", ")", "[", "]", "{", "}")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
            "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?"}


def _syntax(message: str) -> SelectorError:
    return SelectorError(f"CEL parse error: Syntax error: {message}")


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while True:
        space = _SPACE.match(text, pos)
        if space:
            pos = space.end()
        if pos >= len(text):
            tokens.append(_Token("eof", "<EOF>"))
            return tokens
        string = _STRING_START.match(text, pos)
        if string:
            token, pos = _string(text, pos, string)
            tokens.append(token)
            continue
        number = _NUMBER.match(text, pos)
        if number and (text[pos] != "." or not tokens or tokens[-1].kind == "punct"):
            tokens.append(_number(number.group(0), bool(number.group(1))))
            pos = number.end()
            continue
        ident = _IDENT_RE.match(text, pos)
        if ident:
            word = ident.group(0)
            if word in ("true", "false"):
                tokens.append(_Token("literal", word, word == "true", "bool"))
            elif word == "null":
                tokens.append(_Token("literal", word, None, "structpb.NullValue"))
            else:
                tokens.append(_Token("punct" if word == "in" else "ident", word))
            pos = ident.end()
            continue
        for punct in _PUNCTS:
            if text.startswith(punct, pos):
                tokens.append(_Token("punct", punct))
                pos += len(punct)
                break
        else:
            raise _syntax(f"token recognition error at: '{text[pos]}'")


def _number(text: str, is_double: bool) -> _Token:
    if is_double:
        return _Token("literal", text, float(text), "float64")
    unsigned = text[-1] in "uU"
    digits = text[:-1] if unsigned else text
    value = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits)
    if value >= (1 << 64 if unsigned else 1 << 63):
        raise SelectorError(f"CEL parse error: invalid {'uint' if unsigned else 'int'} literal")
    return _Token("literal", text, value, "uint64" if unsigned else "int64")


def _string(text: str, pos: int, start: re.Match[str]) -> tuple[_Token, int]:
    prefix, quote = (start.group(1) or "").lower(), start.group(2)
    raw, as_bytes = "r" in prefix, "b" in prefix
    i = start.end()
    chars: list[str] = []
    while True:
        if i >= len(text) or (len(quote) == 1 and text[i] == "\n"):
            raise _syntax(f"token recognition error at: '{text[pos:i]}'")
        if text.startswith(quote, i):
            break
        if text[i] == "\\" and not raw:
            decoded, i = _escape(text, i, pos)
            chars.append(decoded)
        else:
            chars.append(text[i])
            i += 1
    value = "".join(chars)
    end = i + len(quote)
    if as_bytes:
        return _Token("literal", text[pos:end], value.encode("utf-8", "surrogatepass"), "[]uint8"), end
    return _Token("literal", text[pos:end], value, "string"), end


def _escape(text: str, i: int, token_start: int) -> tuple[str, int]:
    char = text[i + 1: i + 2]
    if char in _ESCAPES:
        return _ESCAPES[char], i + 2
    widths = {"x": 2, "X": 2, "u": 4, "U": 8}
    if char in widths:
        digits = text[i + 2: i + 2 + widths[char]]
        if len(digits) == widths[char] and all(c in "0123456789abcdefABCDEF" for c in digits):
            return chr(int(digits, 16)) if int(digits, 16) < 0x110000 else "\ufffd", i + 2 + widths[char]
    octal = text[i + 1: i + 4]
    if len(octal) == 3 and octal[0] in "0123" and all(c in "01234567" for c in octal):
        return chr(int(octal, 8)), i + 4
    raise _syntax(f"token recognition error at: '{text[token_start: i + 2]}'")


_RELATIONS = {"<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_", "in": "@in"}
_SUMS = {"+": "_+_", "-": "_-_"}
_PRODUCTS = {"*": "_*_", "/": "_/_", "%": "_%_"}


class _Parser:
    """Recursive descent over CEL's grammar (precedence as in CEL.g4), without macros."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.depth = 0

    @property
    def token(self) -> _Token:
        return self.tokens[self.pos]

    def take(self) -> _Token:
        token = self.tokens[self.pos]
        if token.kind != "eof":
            self.pos += 1
        return token

    def accept(self, punct: str) -> bool:
        if self.token.kind == "punct" and self.token.text == punct:
            self.pos += 1
            return True
        return False

    def expect(self, punct: str) -> None:
        if not self.accept(punct):
            raise _syntax(f"mismatched input '{self.token.text}' expecting '{punct}'")

    def parse(self) -> _Node:
        node = self.expr()
        if self.token.kind != "eof":
            raise _syntax(f"mismatched input '{self.token.text}' expecting <EOF>")
        return node

    def expr(self) -> _Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise SelectorError(f"CEL parse error: expression recursion limit exceeded: {_MAX_DEPTH}")
        node = self.binary(0)
        if self.accept("?"):
            then = self.binary(0)
            self.expect(":")
            node = _Node(_CALL, "_?_:_", (node, then, self.expr()))
        self.depth -= 1
        return node

    _LEVELS = ({"||": "_||_"}, {"&&": "_&&_"}, _RELATIONS, _SUMS, _PRODUCTS)

    def binary(self, level: int) -> _Node:
        if level == len(self._LEVELS):
            return self.unary()
        operators = self._LEVELS[level]
        node = self.binary(level + 1)
        while self.token.kind == "punct" and self.token.text in operators:
            name = operators[self.take().text]
            node = _Node(_CALL, name, (node, self.binary(level + 1)))
        return node

    def unary(self) -> _Node:
        for punct, name in (("!", "!_"), ("-", "-_")):
            count = 0
            while self.accept(punct):
                count += 1
            if count:
                if punct == "-" and self.token.kind == "literal" and isinstance(self.token.value, (int, float)) \
                        and not isinstance(self.token.value, bool) and self.token.go_type != "uint64":
                    count -= 1  # CEL reads a minus before a number as part of the literal
                    literal = self.take()
                    operand = _Node(_LITERAL, value=-literal.value, go_type=literal.go_type)
                    operand = self.member_tail(operand)
                else:
                    operand = self.member()
                return _Node(_CALL, name, (operand,)) if count % 2 else operand
        return self.member()

    def member(self) -> _Node:
        return self.member_tail(self.primary())

    def member_tail(self, node: _Node) -> _Node:
        while True:
            if self.accept("."):
                token = self.take()
                if token.kind != "ident":
                    raise _syntax(f"mismatched input '{token.text}' expecting IDENTIFIER")
                if self.accept("("):
                    node = _Node(_CALL, token.text, self.arguments(")"), operand=node)
                else:
                    node = _Node(_SELECT, token.text, operand=node)
            elif self.accept("["):
                index = self.expr()
                self.expect("]")
                node = _Node(_CALL, "_[_]", (node, index))
            elif self.token.text == "{" and self.token.kind == "punct" and _is_name(node):
                self.take()
                node = self.struct(node)
            else:
                return node

    def primary(self) -> _Node:
        token = self.take()
        if token.kind == "punct" and token.text == "." and self.token.kind == "ident":
            token = _Token("ident", "." + self.take().text)
        if token.kind == "ident":
            if token.text.lstrip(".") in _RESERVED:
                raise SelectorError(f"CEL parse error: reserved identifier: {token.text.lstrip('.')}")
            if self.accept("("):
                return _Node(_CALL, token.text, self.arguments(")"))
            return _Node(_IDENT, token.text)
        if token.kind == "literal":
            return _Node(_LITERAL, value=token.value, go_type=token.go_type)
        if token.kind == "punct" and token.text == "(":
            node = self.expr()
            self.expect(")")
            return node
        if token.kind == "punct" and token.text == "[":
            return _Node(_LIST, args=self.arguments("]", trailing_comma=True))
        if token.kind == "punct" and token.text == "{":
            entries: list[_Node] = []
            while not self.accept("}"):
                entries.append(self.expr())
                self.expect(":")
                entries.append(self.expr())
                if not self.accept(","):
                    self.expect("}")
                    break
            return _Node(_MAP, args=tuple(entries))
        raise _syntax(f"mismatched input '{token.text}' expecting an expression")

    def arguments(self, close: str, trailing_comma: bool = False) -> tuple[_Node, ...]:
        args: list[_Node] = []
        if self.accept(close):
            return ()
        while True:
            args.append(self.expr())
            if self.accept(close):
                return tuple(args)
            if not self.accept(","):
                raise _syntax(f"mismatched input '{self.token.text}' expecting {{'{close}', ','}}")
            if trailing_comma and self.accept(close):
                return tuple(args)

    def struct(self, name: _Node) -> _Node:
        values: list[_Node] = []
        while not self.accept("}"):
            field = self.take()
            if field.kind != "ident":
                raise _syntax(f"mismatched input '{field.text}' expecting IDENTIFIER")
            self.expect(":")
            values.append(self.expr())
            if not self.accept(","):
                self.expect("}")
                break
        return _Node(_STRUCT, name.name, tuple(values))


def _is_name(node: _Node) -> bool:
    while node.kind == _SELECT and node.operand is not None:
        node = node.operand
    return node.kind == _IDENT


# -- hashes of stored objects, shared by every LIST and watch stream of one store --------------------

class _Metadata(msgspec.Struct):
    uid: str = ""
    namespace: str = ""


class _Head(msgspec.Struct):
    # A read-only projection to find two strings fast; the stored bytes are what is served.
    metadata: _Metadata = msgspec.field(default_factory=_Metadata)


_read_head = msgspec.json.Decoder(_Head).decode


class FieldHashes:
    """FNV-1a 64 of `metadata.uid` or `metadata.namespace` of stored values, memoized by key and revision.

    A (key, revision) pair names one stored value in one store, so the memo never goes stale; a
    key keeps only its latest entry, and the whole memo is dropped when it outgrows `limit` keys.
    """

    def __init__(self, limit: int = 1 << 21) -> None:
        self.limit = limit
        self.computed = 0  # how many values were hashed (tests check "once per write")
        self._by_field: dict[str, dict[str, tuple[int, int]]] = {UID: {}, NAMESPACE: {}}
        self._namespaces: dict[str, int] = {}

    def memo(self, field: str) -> dict[str, tuple[int, int]]:
        """key -> (revision, hash) for one field; read-only for callers."""
        return self._by_field[field]

    def of(self, field: str, key: str, revision: int, value: bytes) -> int:
        memo = self._by_field[field]
        entry = memo.get(key)
        if entry is not None and entry[0] == revision:
            return entry[1]
        result = self._compute(field, value)
        if len(memo) >= self.limit:
            memo.clear()
        memo[key] = (revision, result)
        return result

    def _compute(self, field: str, value: bytes) -> int:
        self.computed += 1
        try:
            metadata = _read_head(value).metadata
            uid, namespace = metadata.uid, metadata.namespace
        except msgspec.ValidationError:  # a field of another type: read it as a selector would
            meta = msgspec.json.decode(value).get("metadata") or {}
            uid, namespace = (v if isinstance(v, str) else "" for v in (meta.get("uid"), meta.get("namespace")))
        if field == UID:
            return hash_text(uid)
        known = self._namespaces.get(namespace)
        if known is None:
            if len(self._namespaces) >= self.limit:
                self._namespaces.clear()
            known = self._namespaces[namespace] = hash_text(namespace)
        return known


_hashes_by_store: weakref.WeakKeyDictionary[Any, FieldHashes] = weakref.WeakKeyDictionary()


def hashes_for(store: Any) -> FieldHashes:
    """The one memo of a store (revisions are per store, so memos never mix stores)."""
    hashes = _hashes_by_store.get(store)
    if hashes is None:
        hashes = _hashes_by_store[store] = FieldHashes()
    return hashes


@dataclass(frozen=True)
class ShardFilter:
    """A parsed selector bound to its store's hash memo: what LIST and WATCH test records with."""

    selector: Selector
    hashes: FieldHashes

    def holds(self, key: str, revision: int, value: bytes) -> bool:
        return self.selector.matches_hash(self.hashes.of(self.selector.field, key, revision, value))

    def select(self, events: Iterable[Any]) -> list[Any]:
        """The events (anything with .key, .revision and .value) whose object is in the shard.

        The watch hot path: every shard watcher runs this over every batch, so the memo lookup is
        inlined here and only a miss calls out to hash.
        """
        memo = self.hashes.memo(self.selector.field)
        bounds = self.selector.bounds
        hashed = self.hashes.of
        field = self.selector.field
        kept = []
        for event in events:
            entry = memo.get(event.key)
            value_hash = entry[1] if entry is not None and entry[0] == event.revision \
                else hashed(field, event.key, event.revision, event.value)
            for low, high in bounds:
                if low <= value_hash < high:
                    kept.append(event)
                    break
        return kept

    def keep(self, key: str, revision: int, value: memoryview) -> bool:
        """For `Store.list_where`: decided from the memo when it knows this write, so the value is
        copied (to hash it) only on a miss."""
        entry = self.hashes.memo(self.selector.field).get(key)
        if entry is not None and entry[0] == revision:
            value_hash = entry[1]
        else:
            value_hash = self.hashes.of(self.selector.field, key, revision, bytes(value))
        return self.selector.matches_hash(value_hash)

    def __str__(self) -> str:
        return str(self.selector)


def from_query(server: Any, query: Mapping[str, str]) -> ShardFilter | None:
    """The request's shard filter, or None: no parameter, an empty one, or the gate switched off.

    As upstream, only a non-empty parameter is parsed (so "  " is an error and "" is no sharding);
    with the gate off the parameter is ignored, as a server older than 1.36 would.
    """
    text = query.get(PARAMETER, "")
    if not text or not server.gates.enabled(GATE):
        return None
    return ShardFilter(parse(text), hashes_for(server.store))

