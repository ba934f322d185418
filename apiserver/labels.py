"""Label selectors: the upstream grammar, validation, matching and canonical text.

Owns turning a `labelSelector` query string (`app=web,tier in (a,b),!canary,k>3`) into a
`Selector`, turning a `metav1.LabelSelector` dict (`matchLabels`/`matchExpressions`, as in
`spec.selector` or a scale's `status.selector`) into one, and the exact error texts of
k8s.io/apimachinery `labels.Parse` and `LabelSelectorAsSelector`. Callers: the LIST/WATCH handlers
and the watch hub (which turn `SelectorError` into a 400), and the table printers (selector cells).
Field selectors live in `fields.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# selection.Operator values, spelled as upstream spells them.
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

# The order upstream lists them in "expected: ..." errors.
_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)


class SelectorError(ValueError):
    """A selector the API server rejects; `str(err)` is the upstream message (served as a 400)."""


# --- validation texts (k8s.io/apimachinery/pkg/api/validate/content) -------------------------------

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_FMT = _DNS_LABEL_FMT + "(\\." + _DNS_LABEL_FMT + ")*"
_DNS_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_DNS_SUBDOMAIN_RE = re.compile(_DNS_SUBDOMAIN_FMT)
_INT64_RE = re.compile(r"[+-]?[0-9]+")


def _regex_error(msg: str, regex: str, *examples: str) -> str:
    # Upstream glues examples with "', " and " or ", hence the double space in "'a',  or 'b'".
    if not examples:
        return f"{msg} (regex used for validation is '{regex}')"
    text = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{regex}')"


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} bytes"


def label_key_errors(key: str) -> list[str]:
    """Upstream `IsLabelKey`: an optional DNS-subdomain prefix and '/', then a name of 1-63 bytes."""
    errs: list[str] = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns_subdomain_errors(prefix))
    else:
        return [
            "a valid label key "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part " + _max_len_error(63))
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append("name part " + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """Upstream `IsValidLabelValue`: empty, or up to 63 bytes of [-A-Za-z0-9_.] framed by alphanumerics."""
    errs: list[str] = []
    if len(value.encode()) > 63:
        errs.append(_max_len_error(63))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _dns_subdomain_errors(value: str) -> list[str]:
    errs: list[str] = []
    if len(value.encode()) > 253:
        errs.append(_max_len_error(253))
    if not _DNS_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_regex_error(_DNS_SUBDOMAIN_MSG, _DNS_SUBDOMAIN_FMT, "example.com"))
    return errs


def go_quote(s: str) -> str:
    """Go's `%q` of a string (what field errors use for bad values)."""
    out = ['"']
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _go_value(value: str | list[str] | None) -> str:
    # field.Error renders strings with %q and other values (here: []string) with %#v.
    if isinstance(value, str):
        return go_quote(value)
    if value is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in value) + "}"


def _invalid(path: str, value: str | list[str] | None, detail: str) -> str:
    return f"{path}: Invalid value: {_go_value(value)}: {detail}"


def _aggregate(messages: list[str]) -> str:
    # utilerrors.Aggregate: one message as is, several deduplicated inside brackets.
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# --- requirements and selectors --------------------------------------------------------------------


@dataclass(frozen=True)
class Requirement:
    """One `key op values` term; values keep the order they were given in (sorted only for text)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            if self.key not in labels or len(self.values) != 1:
                return False
            have, want = _parse_int64(labels[self.key]), _parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        text = ("!" if self.operator == DOES_NOT_EXIST else "") + self.key
        if self.operator in (EXISTS, DOES_NOT_EXIST):
            return text
        symbol = {IN: " in ", NOT_IN: " notin ", GREATER_THAN: ">", LESS_THAN: "<"}.get(self.operator, self.operator)
        values = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if self.operator in (IN, NOT_IN):
            values = f"({values})"
        return text + symbol + values


class Selector:
    """An AND of requirements, sorted by key as upstream keeps them."""

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False):
        self.requirements: list[Requirement] = sorted(requirements, key=lambda r: r.key)
        self._nothing = nothing

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (`labels.Everything()`)."""
        return not self._nothing and not self.requirements

    @property
    def matches_nothing(self) -> bool:
        """True only for `labels.Nothing()` (what a nil `metav1.LabelSelector` converts to)."""
        return self._nothing

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self._nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def requires_exact_match(self, key: str) -> str | None:
        """The single value `key` must have (from `k=v`, `k==v` or `k in (v)`), else None."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return f"labels.Selector({str(self)!r})"


def everything() -> Selector:
    return Selector()


def nothing() -> Selector:
    return Selector(nothing=True)


def _parse_int64(text: str) -> int | None:
    if not _INT64_RE.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def new_requirement(key: str, operator: str, values: list[str] | None) -> Requirement:
    """Upstream `labels.NewRequirement`: validates the key, the value count and every value."""
    errors: list[str] = []
    if key_errors := label_key_errors(key):
        errors.append(_invalid("key", key, "; ".join(key_errors)))
    vals = list(values) if values is not None else None
    count = len(vals or ())
    if operator in (IN, NOT_IN):
        if count == 0:
            errors.append(_invalid("values", vals, "for 'in', 'notin' operators, values set can't be empty"))
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if count != 1:
            errors.append(_invalid("values", vals, "exact-match compatibility requires one single value"))
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if count != 0:
            errors.append(_invalid("values", vals, "values set must be empty for exists and does not exist"))
    elif operator in (GREATER_THAN, LESS_THAN):
        if count != 1:
            errors.append(_invalid("values", vals, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(vals or ()):
            if _parse_int64(v) is None:
                errors.append(_invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    else:
        supported = ", ".join(go_quote(o) for o in (*_BINARY_OPERATORS, EXISTS, DOES_NOT_EXIST))
        errors.append(f"operator: Unsupported value: {go_quote(operator)}: supported values: {supported}")
    for i, v in enumerate(vals or ()):
        if value_errors := label_value_errors(v):
            errors.append(_invalid(f"values[{i}][{key}]", v, "; ".join(value_errors)))
    if errors:
        raise SelectorError(_aggregate(errors))
    return Requirement(key, operator, tuple(vals or ()))


# --- the lexer and parser of `labels.Parse` --------------------------------------------------------

_END, _CLOSE, _COMMA, _NOT, _DOUBLE_EQ, _EQ, _GT, _IDENT, _IN, _LT, _NOT_EQ, _NOT_IN, _OPEN, _ERROR = range(14)
_TOKENS = {
    ")": _CLOSE, ",": _COMMA, "!": _NOT, "==": _DOUBLE_EQ, "=": _EQ, ">": _GT,
    "in": _IN, "<": _LT, "!=": _NOT_EQ, "notin": _NOT_IN, "(": _OPEN,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")


def _lex(text: str) -> list[tuple[int, str]]:
    """All tokens of `text`, ending with the end-of-string token."""
    items: list[tuple[int, str]] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in _WHITESPACE:
            pos += 1
        # Go reads a NUL byte as the end of input; so do we.
        if pos >= n or text[pos] == "\0":
            items.append((_END, ""))
            return items
        if text[pos] in _SPECIAL:
            buffer, last, last_end = "", None, pos
            while pos < n and text[pos] in _SPECIAL:
                buffer += text[pos]
                if buffer in _TOKENS:
                    last, last_end = (_TOKENS[buffer], buffer), pos + 1
                elif last is not None:
                    break
                pos += 1
            if last is None:
                items.append((_ERROR, f"error expected: keyword found '{buffer}'"))
            else:
                items.append(last)
                pos = last_end
            continue
        start = pos
        while pos < n and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE and text[pos] != "\0":
            pos += 1
        word = text[start:pos]
        items.append((_TOKENS.get(word, _IDENT), word))


class _Parser:
    def __init__(self, text: str):
        self.items = _lex(text)
        self.pos = 0

    # In a values context the keywords `in`/`notin` are ordinary identifiers.
    def lookahead(self, values: bool = True) -> tuple[int, str]:
        return self._as(self.items[self.pos], values)

    def consume(self, values: bool = True) -> tuple[int, str]:
        self.pos += 1
        return self._as(self.items[self.pos - 1], values)

    @staticmethod
    def _as(item: tuple[int, str], values: bool) -> tuple[int, str]:
        tok, lit = item
        if values and tok in (_IN, _NOT_IN):
            return _IDENT, lit
        return tok, lit

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok in (_IDENT, _NOT):
                try:
                    requirements.append(self.requirement())
                except SelectorError as err:
                    raise SelectorError(f"unable to parse requirement: {err}") from None
                tok, lit = self.consume()
                if tok == _END:
                    return requirements
                if tok == _COMMA:
                    tok2, lit2 = self.lookahead()
                    if tok2 not in (_IDENT, _NOT):
                        raise SelectorError(f"found '{lit2}', expected: identifier after ','")
                    continue
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            if tok == _END:
                return requirements
            raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        key, operator = self.key_and_inferred_operator()
        if operator in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, operator, [])
        operator = self.operator()
        if operator in (IN, NOT_IN):
            values = self.value_set()
        else:
            values = self.exact_value()
        return new_requirement(key, operator, sorted(values))

    def key_and_inferred_operator(self) -> tuple[str, str]:
        operator = ""
        tok, lit = self.consume()
        if tok == _NOT:
            operator = DOES_NOT_EXIST
            tok, lit = self.consume()
        if tok != _IDENT:
            raise SelectorError(f"found '{lit}', expected: identifier")
        if key_errors := label_key_errors(lit):
            # The parser validates keys with a nil field path, which prints as "<nil>".
            raise SelectorError(_invalid("<nil>", lit, "; ".join(key_errors)))
        tok, _ = self.lookahead()
        if tok in (_END, _COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        return lit, operator

    def operator(self) -> str:
        tok, lit = self.consume(values=False)
        found = {
            _IN: IN, _EQ: EQUALS, _DOUBLE_EQ: DOUBLE_EQUALS, _GT: GREATER_THAN,
            _LT: LESS_THAN, _NOT_IN: NOT_IN, _NOT_EQ: NOT_EQUALS,
        }.get(tok)
        if found is None:
            raise SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return found

    def value_set(self) -> set[str]:
        tok, lit = self.consume()
        if tok != _OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok in (_IDENT, _COMMA):
            values = self.identifiers()
            if self.consume()[0] != _CLOSE:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok == _CLOSE:
            self.consume()
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.consume()
            if tok == _IDENT:
                values.add(lit)
                tok2, lit2 = self.lookahead()
                if tok2 == _COMMA:
                    continue
                if tok2 == _CLOSE:
                    return values
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:
                # "(,", ",)" and ",," each stand for an empty value.
                if not values:
                    values.add("")
                tok2, _ = self.lookahead()
                if tok2 == _CLOSE:
                    values.add("")
                    return values
                if tok2 == _COMMA:
                    values.add("")
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        tok, _ = self.lookahead()
        if tok in (_END, _COMMA):
            return {""}
        tok, lit = self.consume()
        if tok == _IDENT:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


def parse(text: str) -> Selector:
    """Parse a `labelSelector` string; raises `SelectorError` with the upstream message."""
    return Selector(_Parser(text).parse())


def from_label_selector(spec: Mapping[str, Any] | None) -> Selector:
    """Upstream `metav1.LabelSelectorAsSelector`: None selects nothing, `{}` selects everything."""
    if spec is None:
        return nothing()
    match_labels = spec.get("matchLabels") or {}
    expressions = spec.get("matchExpressions") or []
    if not match_labels and not expressions:
        return everything()
    requirements = [new_requirement(k, EQUALS, [v]) for k, v in sorted(match_labels.items())]
    operators = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}
    for expr in expressions:
        op = expr.get("operator", "")
        if op not in operators:
            raise SelectorError(f"{go_quote(op)} is not a valid label selector operator")
        requirements.append(new_requirement(expr.get("key", ""), operators[op], expr.get("values")))
    return Selector(requirements)


def format_set(labels: Mapping[str, str] | None) -> str:
    """Upstream `labels.Set.String()`: `k=v` pairs sorted by key, comma-joined ("" when empty)."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items()))
