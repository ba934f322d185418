"""Field selectors: parsing, per-kind field-label conversion, and reading a field from an object.

Owns the upstream grammar of `fieldSelector` (`a=b`, `a==b`, `a!=b`, comma = AND, `\\,` `\\=` `\\\\`
escapes), the conversion step that accepts or rejects each label for a kind (with the exact upstream
texts: `field label not supported: x` for kinds with their own conversion function, the
`"x" is not a known field selector: ...` text for the default one), and `value()`, which reads a
field the way the registries' GetAttrs do. Callers: the LIST/WATCH handlers and the watch hub; the
accepted labels come from `data/resources-1.36.json` (`fieldSelectors`, `fieldSelectorAliases`).
Label selectors live in `labels.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from apiserver.labels import go_quote

EQUALS = "="
NOT_EQUALS = "!="
DEFAULT_FIELDS = ("metadata.name", "metadata.namespace")


class SelectorError(ValueError):
    """A field selector the API server rejects; `str(err)` is the upstream message (a 400)."""


class Requirement(NamedTuple):
    """One term after conversion; `==` is reported as `=`, as upstream does."""

    field: str
    operator: str
    value: str


def escape_value(value: str) -> str:
    """Upstream `fields.EscapeValue`: backslash-escape `\\`, `,` and `=`."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_value(text: str) -> str:
    """Upstream `fields.UnescapeValue`, with its two error texts."""
    if not any(c in text for c in "\\,="):
        return text
    out: list[str] = []
    in_slash = False
    for ch in text:
        if in_slash:
            if ch not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            # Go formats the rune with %v, which prints its code point.
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(selector: str) -> list[str]:
    # Commas split terms unless escaped; the backslash stays for unescape_value to handle.
    if not selector:
        return []
    terms, start, in_slash = [], 0, False
    for i, ch in enumerate(selector):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(selector[start:i])
            start = i + 1
    terms.append(selector[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    # The first operator occurrence splits the term; "!=" and "==" win over "=" at the same spot.
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


class FieldSelector:
    """An AND of converted field requirements."""

    def __init__(self, requirements: Iterable[Requirement] = ()):
        self.requirements: list[Requirement] = list(requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements

    def matches(self, obj: Mapping[str, Any]) -> bool:
        for field, op, want in self.requirements:
            have = value(obj, field)
            if (have == want) != (op == EQUALS):
                return False
        return True

    def requires_exact_match(self, field: str) -> str | None:
        """The value `field` must equal (from an `=` term), else None — handy for indexes."""
        for f, op, v in self.requirements:
            if f == field and op == EQUALS:
                return v
        return None

    def __str__(self) -> str:
        return ",".join(f"{f}{op}{escape_value(v)}" for f, op, v in self.requirements)

    def __repr__(self) -> str:
        return f"fields.FieldSelector({str(self)!r})"


def parse(
    selector: str,
    allowed: Iterable[str] | None = None,
    aliases: Mapping[str, str] | None = None,
    *,
    default_conversion: bool | None = None,
) -> FieldSelector:
    """Parse `selector` and convert every label for one kind.

    `allowed` is the kind's `fieldSelectors` list (None accepts any label, for callers that only
    want the grammar); `aliases` maps a label to the field it filters on (`spec.host` →
    `spec.nodeName`, `regarding.kind` → `involvedObject.kind`). `default_conversion` picks the
    error text for unknown labels; left as None it is inferred: a kind whose list is exactly
    `metadata.name`/`metadata.namespace` uses the default conversion function.
    """
    terms = sorted(_split_terms(selector))
    parsed: list[tuple[str, str, str]] = []
    for term in terms:
        if term == "":
            continue
        split = _split_term(term)
        if split is None:
            raise SelectorError(f"invalid selector: '{selector}'; can't understand '{term}'")
        lhs, op, rhs = split
        parsed.append((lhs, NOT_EQUALS if op == "!=" else EQUALS, unescape_value(rhs)))

    if allowed is None:
        return FieldSelector(Requirement(*p) for p in parsed)
    allowed_set = frozenset(allowed)
    alias_map = dict(aliases or {})
    if default_conversion is None:
        default_conversion = allowed_set == frozenset(DEFAULT_FIELDS) and not alias_map
    converted = []
    for field, op, val in parsed:
        if field not in allowed_set:
            raise SelectorError(_unsupported(field, default_conversion))
        converted.append(Requirement(alias_map.get(field, field), op, val))
    return FieldSelector(converted)


def parse_for_resource(selector: str, resource: Mapping[str, Any]) -> FieldSelector:
    """`parse` with the `fieldSelectors`/`fieldSelectorAliases` of one resources-1.36.json row."""
    return parse(selector, resource.get("fieldSelectors") or DEFAULT_FIELDS, resource.get("fieldSelectorAliases"))


def _unsupported(field: str, default_conversion: bool) -> str:
    if default_conversion:
        return (
            f"{go_quote(field)} is not a known field selector: only "
            f"{go_quote('metadata.name')}, {go_quote('metadata.namespace')}"
        )
    return f"field label not supported: {field}"


# --- reading fields the way the registries' GetAttrs do --------------------------------------------


def _dig(obj: Mapping[str, Any], path: str) -> Any:
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _is_events_v1(obj: Mapping[str, Any]) -> bool:
    # events.k8s.io/v1 Events are the same stored objects under other field names.
    api_version = obj.get("apiVersion") or ""
    return api_version.startswith("events.k8s.io/") or ("regarding" in obj and "involvedObject" not in obj)


def _pod_ip(pod: Mapping[str, Any]) -> str:
    status = pod.get("status") or {}
    ips = status.get("podIPs") or []
    if ips and isinstance(ips[0], Mapping):
        return _text(ips[0].get("ip"))
    return _text(status.get("podIP"))


def _event_source(event: Mapping[str, Any]) -> str:
    if _is_events_v1(event):
        component = _dig(event, "deprecatedSource.component")
        return _text(component or event.get("reportingController"))
    return _text(_dig(event, "source.component") or event.get("reportingComponent"))


_READERS: dict[str, Any] = {
    # Pods: GetAttrs reads the first pod IP, and hostNetwork defaults to false.
    "status.podIP": _pod_ip,
    "spec.hostNetwork": lambda o: _text(bool(_dig(o, "spec.hostNetwork"))),
    # The pod conversion accepts status.podIPs, but GetAttrs never sets it, so it reads as "".
    "status.podIPs": lambda o: "",
    # Nodes, ReplicationControllers, Jobs: Go formats the typed zero value when unset.
    "spec.unschedulable": lambda o: _text(bool(_dig(o, "spec.unschedulable"))),
    "status.replicas": lambda o: _text(int(_dig(o, "status.replicas") or 0)),
    "status.successful": lambda o: _text(int(_dig(o, "status.succeeded") or 0)),
    # Events (core/v1 names; events.k8s.io objects are read through their own names).
    "source": _event_source,
    "reportingComponent": lambda o: _text(o.get("reportingController") if _is_events_v1(o) else o.get("reportingComponent")),
}


def value(obj: Mapping[str, Any], field: str) -> str:
    """The string a field selector compares for `field` of `obj` ("" when unset)."""
    reader = _READERS.get(field)
    if reader is not None:
        return reader(obj)
    if field.startswith("involvedObject.") and _is_events_v1(obj):
        return _text(_dig(obj, "regarding." + field.removeprefix("involvedObject.")))
    return _text(_dig(obj, field))
