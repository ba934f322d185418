"""Kubernetes `semver` library: `semver()`, `isSemver()` (with optional normalisation) and methods.

Parsing and precedence follow github.com/blang/semver/v4 (Parse, Compare), error texts
included; normalisation is the library's normalizeAndParse (drop a leading "v", pad to three
parts, strip leading zeros). Registered by `admission.cel.library`; values are
`kube_types.Semver` messages without build metadata, so equality ignores it as upstream does.
"""

from __future__ import annotations

import json

from cel_expr_python import cel

from admission.cel.library import spec
from admission.cel import kube_types
from admission.cel.library.failure import LibraryError

T = cel.Type
S = kube_types.SEMVER
_DIGITS = set("0123456789")
_ALPHANUM = _DIGITS | set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _number(text: str, what: str) -> int:
    if not text or not set(text) <= _DIGITS:
        raise LibraryError(f"Invalid character(s) found in {what} number {_quote(text)}")
    if len(text) > 1 and text[0] == "0":
        raise LibraryError(f"{what.capitalize()} number must not contain leading zeroes {_quote(text)}")
    value = int(text)
    if value >= 2**64:
        raise LibraryError(f'strconv.ParseUint: parsing {_quote(text)}: value out of range')
    return value


def parse(text: str) -> object:
    """blang/semver Parse: a Semver message or LibraryError with its text."""
    if not text:
        raise LibraryError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise LibraryError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    rest = parts[2]
    cut = min((i for i in (rest.find("+"), rest.find("-")) if i != -1), default=len(rest))
    patch = _number(rest[:cut], "patch")
    build: list[str] = []
    pre: list[str] = []
    extra = rest[cut:]
    if "+" in extra:
        extra, build_text = extra.split("+", 1)
        build = build_text.split(".")
    if extra.startswith("-"):
        pre = extra[1:].split(".")
    for part in pre:
        if not part:
            raise LibraryError("Prerelease is empty")
        if set(part) <= _DIGITS:
            if len(part) > 1 and part[0] == "0":
                raise LibraryError(
                    f"Numeric PreRelease version must not contain leading zeroes {_quote(part)}")
        elif not set(part) <= _ALPHANUM:
            raise LibraryError(f"Invalid character(s) found in prerelease {_quote(part)}")
    for part in build:
        if not part:
            raise LibraryError("Build meta data is empty")
        if not set(part) <= _ALPHANUM:
            raise LibraryError(f"Invalid character(s) found in build meta data {_quote(part)}")
    return kube_types.Semver(major=major, minor=minor, patch=patch, pre=pre)


def _normalize(text: str) -> str:
    text = text[1:] if text.startswith("v") else text
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            stripped = part.lstrip("0")
            if not stripped or stripped[0] not in _DIGITS:
                stripped = "0" + stripped
            parts[i] = stripped
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise LibraryError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _semver(text: str, normalize: bool = False) -> object:
    return parse(_normalize(text) if normalize else text)


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        _semver(text, normalize)
    except LibraryError:
        return False
    return True


def _pre_key(part: str) -> tuple[int, int, str]:
    # Numeric identifiers sort before alphanumeric ones, numerically among themselves.
    return (0, int(part), "") if set(part) <= _DIGITS else (1, 0, part)


def compare(left: object, right: object) -> int:
    a = (left.major, left.minor, left.patch)  # type: ignore[attr-defined]
    b = (right.major, right.minor, right.patch)  # type: ignore[attr-defined]
    if a != b:
        return -1 if a < b else 1
    pre_a, pre_b = list(left.pre), list(right.pre)  # type: ignore[attr-defined]
    if not pre_a or not pre_b:
        return (not pre_a) - (not pre_b)
    key_a, key_b = [_pre_key(p) for p in pre_a], [_pre_key(p) for p in pre_b]
    return (key_a > key_b) - (key_a < key_b)


def _member(name: str, overload: str, result: T, params: list[T], impl: object) -> tuple:
    return name, spec.overload(overload, result, [S, *params], is_member=True, impl=impl)


OVERLOADS = [
    ("semver", spec.overload("string_to_semver", S, [T.STRING], impl=_semver)),
    ("semver", spec.overload("string_bool_to_semver", S, [T.STRING, T.BOOL], impl=_semver)),
    ("isSemver", spec.overload("is_semver_string", T.BOOL, [T.STRING], impl=_is_semver)),
    ("isSemver", spec.overload("is_semver_string_bool", T.BOOL, [T.STRING, T.BOOL],
                              impl=_is_semver)),
    _member("isGreaterThan", "semver_is_greater_than", T.BOOL, [S],
            lambda a, b: compare(a, b) == 1),
    _member("isLessThan", "semver_is_less_than", T.BOOL, [S], lambda a, b: compare(a, b) == -1),
    _member("compareTo", "semver_compare_to", T.INT, [S], compare),
    _member("major", "semver_major", T.INT, [], lambda v: v.major),
    _member("minor", "semver_minor", T.INT, [], lambda v: v.minor),
    _member("patch", "semver_patch", T.INT, [], lambda v: v.patch),
]
