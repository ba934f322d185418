"""Kubernetes `url` library: `url()`, `isURL()` and the URL getters.

`url()` accepts what Go's url.ParseRequestURI accepts (an absolute URI or an absolute path)
and then splits the text as url.Parse does, fragment included; errors are Go's
`parse "<text>": <reason>` behind the library's prefix. Query parsing is url.ParseQuery's
(`&` only, `+` is a space, bad pairs skipped). Registered by `admission.cel.library`; values
are `kube_types.URL` messages.
"""

from __future__ import annotations

import json
import re

from cel_expr_python import cel

from admission.cel.library import spec
from admission.cel import kube_types
from admission.cel.library.failure import LibraryError

T = cel.Type
URL = kube_types.URL_TYPE
_PREFIX = "URL parse error during conversion from string: "
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_HEX = "0123456789abcdefABCDEF"


class _ParseError(ValueError):
    pass


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _unescape(text: str, *, query: bool, host: bool = False) -> str:
    out = bytearray()
    i = 0
    raw = text.encode()
    while i < len(raw):
        byte = raw[i]
        if byte == 0x25:  # '%'
            piece = raw[i:i + 3].decode(errors="replace")
            if len(piece) < 3 or piece[1] not in _HEX or piece[2] not in _HEX:
                raise _ParseError(f"invalid URL escape {_quote(piece)}")
            out.append(int(piece[1:], 16))
            i += 3
            continue
        if byte == 0x2B and query:  # '+'
            out.append(0x20)
        else:
            if host and byte < 0x80 and chr(byte) not in _HOST_OK and not chr(byte).isalnum():
                raise _ParseError(f"invalid character {_quote(chr(byte))} in host name")
            out.append(byte)
        i += 1
    return out.decode(errors="replace")


_HOST_OK = set("-._~!$&'()*+,;=:[]<>\"")
# Characters url.URL.EscapedPath leaves alone (shouldEscape with encodePath is false).
_PATH_SAFE = set("-_.~$&+,/:;=@")
_RAW_PATH_OK = set("!$&'()*+,;=:@[]")


def _escape_path(path: str) -> str:
    out = []
    for byte in path.encode():
        char = chr(byte)
        if byte < 0x80 and (char.isalnum() or char in _PATH_SAFE):
            out.append(char)
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def _valid_encoded(raw: str) -> bool:
    for char in raw:
        if char in _RAW_PATH_OK or char == "%":
            continue
        if ord(char) < 0x80 and (char.isalnum() or char in _PATH_SAFE):
            continue
        return False
    return True


def _split_host_port(host: str) -> tuple[str, str]:
    colon = host.rfind(":")
    if colon != -1 and (host.startswith("[") is False or host.rfind("]") < colon):
        return host[:colon], host[colon + 1:]
    return host, ""


def _parse_host(host: str) -> str:
    if host.startswith("["):
        close = host.rfind("]")
        if close < 0:
            raise _ParseError("missing ']' in host")
        port = host[close + 1:]
        if port and not (port[0] == ":" and port[1:].isdigit() or port == ":"):
            raise _ParseError(f"invalid port {_quote(port)} after host")
        return _unescape(host, query=False, host=True)
    colon = host.rfind(":")
    if colon != -1:
        port = host[colon:]
        if not (port == ":" or port[1:].isdigit() and port[1:].isascii()):
            raise _ParseError(f"invalid port {_quote(port)} after host")
    return _unescape(host, query=False, host=True)


def _parse(text: str, via_request: bool) -> dict[str, object]:
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in text):
        raise _ParseError("net/url: invalid control character in URL")
    parts: dict[str, object] = {}
    if not text and via_request:
        raise _ParseError("empty url")
    if text == "*":
        parts["path"] = "*"
        return parts
    rest = text
    scheme_match = _SCHEME.match(rest)
    if rest.startswith(":"):
        raise _ParseError("missing protocol scheme")
    if scheme_match and rest[scheme_match.end():scheme_match.end() + 1] == ":":
        parts["scheme"] = scheme_match.group().lower()
        rest = rest[scheme_match.end() + 1:]
    scheme = parts.get("scheme", "")
    if rest.endswith("?") and rest.count("?") == 1:
        parts["force_query"] = True
        rest = rest[:-1]
    elif "?" in rest:
        rest, parts["raw_query"] = rest.split("?", 1)
    if not rest.startswith("/"):
        if scheme:
            parts["opaque"] = rest
            return parts
        if via_request:
            raise _ParseError("invalid URI for request")
        first_segment = rest.split("/", 1)[0]
        if ":" in first_segment:
            raise _ParseError("first path segment in URL cannot contain colon")
    if (scheme or not via_request and not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        userinfo, at, host = authority.rpartition("@")
        if at:
            parts["userinfo"] = userinfo
        parts["host"] = _parse_host(host if at else authority)
    path = _unescape(rest, query=False)
    parts["path"] = path
    if rest != _escape_path(path) and _valid_encoded(rest):
        parts["raw_path"] = rest
    return parts


def parse(text: str) -> object:
    """A URL message, or LibraryError with the library's and Go's text."""
    try:
        _parse(text, via_request=True)
        fragment = ""
        body = text
        if "#" in text:
            body, fragment = text.split("#", 1)
        parts = _parse(body, via_request=False)
        if fragment:
            parts["fragment"] = _unescape(fragment, query=False)
    except _ParseError as err:
        raise LibraryError(f"{_PREFIX}parse {_quote(text)}: {err}") from None
    return kube_types.URL(**parts)


def _is_url(text: str) -> bool:
    try:
        _parse(text, via_request=True)
    except _ParseError:
        return False
    return True


def _hostname(message: object) -> str:
    host = message.host  # type: ignore[attr-defined]
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host[1:]
    return _split_host_port(host)[0] if ":" in host else host


def _port(message: object) -> str:
    host = message.host  # type: ignore[attr-defined]
    colon = host.rfind(":")
    if colon == -1 or host.rfind("]") > colon:
        return ""
    port = host[colon + 1:]
    return port if port.isdigit() else ""


def _escaped_path(message: object) -> str:
    raw = message.raw_path  # type: ignore[attr-defined]
    return raw if raw else _escape_path(message.path)  # type: ignore[attr-defined]


def _query(message: object) -> dict[str, list[str]]:
    result: dict[str, list[str]] = {}
    for pair in message.raw_query.split("&"):  # type: ignore[attr-defined]
        if not pair or ";" in pair:
            continue
        key, _, value = pair.partition("=")
        try:
            key, value = _unescape(key, query=True), _unescape(value, query=True)
        except _ParseError:
            continue
        result.setdefault(key, []).append(value)
    return result


def _member(name: str, overload: str, result: T, impl: object) -> tuple:
    return name, spec.overload(overload, result, [URL], is_member=True, impl=impl)


OVERLOADS = [
    ("url", spec.overload("string_to_url", URL, [T.STRING], impl=parse)),
    ("isURL", spec.overload("is_url_string", T.BOOL, [T.STRING], impl=_is_url)),
    _member("getScheme", "url_get_scheme", T.STRING, lambda u: u.scheme),
    _member("getHost", "url_get_host", T.STRING, lambda u: u.host),
    _member("getHostname", "url_get_hostname", T.STRING, _hostname),
    _member("getPort", "url_get_port", T.STRING, _port),
    _member("getEscapedPath", "url_get_escaped_path", T.STRING, _escaped_path),
    _member("getQuery", "url_get_query", T.Map(T.STRING, T.List(T.STRING)), _query),
]
