"""The JSONPath subset CRDs use in additionalPrinterColumns (and selectableFields).

Supported: `.a.b`, `['a.b']`, `[3]`, `[-1]`, `[*]`, `.*` and filters `[?(@.k=="v")]` /
`[?(@.k!="v")]` / `[?(@.k)]`, optionally wrapped in `{…}` as kubectl writes templates.
`find(obj, path)` returns every match in document order; the printer shows the first, as
upstream's table convertor does. Called by `printing.py`; `parse` raises ValueError for paths
`crd_validation.py` must reject.
"""

from __future__ import annotations

import functools
import re
from typing import Any

_FILTER = re.compile(r"""^\?\(@((?:\.[A-Za-z0-9_\-/]+)+)\s*(?:(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(-?[0-9.]+|true|false)))?\)$""")
Step = tuple[str, Any]


@functools.lru_cache(maxsize=1024)
def parse(path: str) -> tuple[Step, ...]:
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if not text.startswith((".", "[")):
        raise ValueError(f"unrecognized character in action: {text[:1]!r}")
    steps: list[Step] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == ".":
            j = i + 1
            while j < len(text) and text[j] not in ".[":
                j += 1
            name = text[i + 1:j]
            if name == "*":
                steps.append(("all", None))
            elif name:
                steps.append(("key", name))
            elif j == len(text) and i == 0:
                pass  # "." alone: the object itself
            else:
                raise ValueError("invalid field name")
            i = j
        elif ch == "[":
            j = text.find("]", i)
            if j < 0:
                raise ValueError("unterminated array")
            if text[i + 1:i + 2] == "?":  # a filter may contain ']' only inside quotes; keep it simple
                j = text.find(")]", i)
                if j < 0:
                    raise ValueError("unterminated filter")
                j += 1
            steps.append(_bracket(text[i + 1:j]))
            i = j + 1
        else:
            raise ValueError(f"unrecognized character in action: {ch!r}")
    return tuple(steps)


def _bracket(inner: str) -> Step:
    inner = inner.strip()
    if inner == "*":
        return ("all", None)
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        return ("key", inner[1:-1])
    if re.fullmatch(r"-?\d+", inner):
        return ("index", int(inner))
    m = _FILTER.match(inner)
    if m:
        fields = tuple(m.group(1).lstrip(".").split("."))
        op = m.group(2)
        if m.group(3) is not None or m.group(4) is not None:
            want: Any = m.group(3) if m.group(3) is not None else m.group(4)
        elif m.group(5) is not None:
            raw = m.group(5)
            want = {"true": True, "false": False}.get(raw, None)
            if want is None:
                want = float(raw) if "." in raw else int(raw)
        else:
            want = None
        return ("filter", (fields, op, want))
    raise ValueError(f"unsupported JSONPath element: [{inner}]")


def find(obj: Any, path: str) -> list[Any]:
    nodes = [obj]
    for kind, arg in parse(path):
        nxt: list[Any] = []
        for node in nodes:
            if kind == "key" and isinstance(node, dict) and arg in node:
                nxt.append(node[arg])
            elif kind == "index" and isinstance(node, list) and -len(node) <= arg < len(node):
                nxt.append(node[arg])
            elif kind == "all":
                nxt.extend(node if isinstance(node, list) else list(node.values()) if isinstance(node, dict) else [])
            elif kind == "filter" and isinstance(node, list):
                nxt.extend(item for item in node if _keep(item, arg))
        nodes = nxt
    return nodes


def _keep(item: Any, rule: tuple[tuple[str, ...], str | None, Any]) -> bool:
    fields, op, want = rule
    value: Any = item
    for name in fields:
        if not isinstance(value, dict) or name not in value:
            return False
        value = value[name]
    if op is None:
        return True
    equal = _same(value, want)
    return equal if op == "==" else not equal


def _same(a: Any, b: Any) -> bool:
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, numbers) and isinstance(b, numbers):
        return a == b
    return type(a) is type(b) and a == b
