"""CEL errors with cel-go's texts, translated from what cel-expr-python (cel-cpp) reports.

    CelError
    ├── CompileError       parse and type-check errors, cel-go's "ERROR: <input>:L:C: …" format
    └── EvalError          a runtime error value ("no such key: x", library messages)
        └── CostLimitExceeded   "operation cancelled: actual cost limit exceeded"

Compile texts are rebuilt from cel-cpp's entries: the status prefix and suffix go, positions
are mapped back through the Object{} rewrite, and member-call overload errors take cel-go's
`'Type.(args)'` form. Runtime texts of the core language are mapped to cel-go's wording.
Raised by `environment.py`; callers put `.message` into their Status or field error.
"""

from __future__ import annotations

import re
from typing import Callable

from admission.cel import cost


class CelError(Exception):
    """Base of every CEL error; `.message` is the text a Kubernetes server would show."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class CompileError(CelError):
    """The expression does not parse or does not type-check."""


class EvalError(CelError):
    """Evaluation produced an error value."""


class CostLimitExceeded(EvalError):
    """The evaluation would pass its cost limit; the message is cel-go's."""

    def __init__(self, message: str = cost.COST_LIMIT_MESSAGE):
        super().__init__(message)


_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_ENTRY = re.compile(
    r"ERROR: <input>:(\d+):(\d+): (.*?)\n \| [^\n]*\n \| [.]*\^", re.DOTALL
)
_OVERLOAD = re.compile(r"found no matching overload for '([^']+)' applied to '\((.*)\)'$")


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    return line, offset - start + 1


def _offset(text: str, line: int, col: int) -> int:
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return start + col - 1


def _member_call(source: str, offset: int, function: str) -> bool:
    # cel reports a call at its "(": a member call has ".function" right before it.
    before = source[:offset].rstrip()
    return before.endswith(function) and before[: len(before) - len(function)].rstrip().endswith(".")


def _cel_go_overload(message: str, source: str, offset: int) -> str:
    match = _OVERLOAD.match(message)
    if not match or not _member_call(source, offset, match.group(1)):
        return message
    function, args = match.groups()
    receiver, _, rest = args.partition(", ")
    return f"found no matching overload for '{function}' applied to '{receiver}.({rest})'"


_UNDECLARED = re.compile(r"^undeclared reference to '([A-Za-z_][\w.]*)' (\(in container '[^']*'\))$")


def _cel_go_undeclared(message: str, source: str, offset: int) -> tuple[str, int]:
    # cel-cpp names the whole qualified name at its last dot; cel-go names the first
    # identifier at its start ("undeclared reference to 'object'" at 1:1).
    match = _UNDECLARED.match(message)
    if not match or "." not in match.group(1):
        return message, offset
    name = match.group(1)
    first, last = name.split(".")[0], name.rsplit(".", 1)[1]
    start = offset - (len(name) - len(last) - 1)
    if start < 0 or source[start:start + len(first)] != first:
        return message, offset
    return f"undeclared reference to '{first}' {match.group(2)}", start


def compile_error(raw: str, source: str, to_original: Callable[[int], int], rewritten: str) -> CompileError:
    """A CompileError with cel-go's text for cel-cpp's error string `raw`."""
    entries = _ENTRY.findall(raw)
    if not entries:
        return CompileError(_STATUS_PREFIX.sub("", raw).removesuffix(" [INVALID_ARGUMENT]"))
    lines = source.split("\n")
    rendered = []
    for line_text, col_text, message in entries:
        offset = to_original(_offset(rewritten, int(line_text), int(col_text)))
        message = _cel_go_overload(message, source, offset)
        message, offset = _cel_go_undeclared(message, source, offset)
        line, col = _line_col(source, offset)
        snippet = lines[line - 1] if line - 1 < len(lines) else ""
        rendered.append(f"ERROR: <input>:{line}:{col}: {message}\n | {snippet}\n | {'.' * (col - 1)}^")
    return CompileError("\n".join(rendered))


_KEY_NOT_FOUND = re.compile(r'^Key not found in map : "?(.*?)"?$')
_INDEX = re.compile(r"^Index error: index=(-?\d+) size=(\d+)$")
_RUNTIME_TEXTS = {
    "divide by zero": "division by zero",
    "modulus by zero": "modulus by zero",
    "integer overflow": "integer overflow",
    "Applying SELECT to non-message type": "no such overload",
}


def eval_error(raw: str) -> EvalError:
    """An EvalError with cel-go's wording for a cel-cpp error value's text."""
    message = _STATUS_PREFIX.sub("", str(raw))
    if (match := _KEY_NOT_FOUND.match(message)) is not None:
        return EvalError(f"no such key: {match.group(1)}")
    if (match := _INDEX.match(message)) is not None:
        return EvalError(
            f"index '{match.group(1)}' out of range in list size '{match.group(2)}'")
    if message.startswith("No matching overloads found"):
        return EvalError("no such overload")
    return EvalError(_RUNTIME_TEXTS.get(message, message))
