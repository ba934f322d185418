"""Kubernetes `cidr` library: `cidr()`, `isCIDR()` and the CIDR methods.

Prefixes parse as netip.ParsePrefix (`netaddr.py`); like upstream, host bits after the mask
are kept (`masked()` clears them) and IPv4-mapped IPv6 prefixes are refused. The upstream
conversion error text repeats its prefix twice; that is kept. Registered by
`admission.cel.library`; values are `kube_types.CIDR` messages (address bytes + bits).
`string(<CIDR>)` is missing: cel-cpp tells overloads apart by value kind, `string(<IP>)`
already takes the message kind, and a folded `string(dyn)` collides with cel's own `string`.
"""

from __future__ import annotations

from cel_expr_python import cel

from admission.cel.library import spec
from admission.cel import kube_types
from admission.cel.library import ip, netaddr
from admission.cel.library.failure import LibraryError

T = cel.Type
CIDR = kube_types.CIDR_TYPE
IP = kube_types.IP_TYPE
_PARSE_ERROR = "network address parse error during conversion from string: "


def parse(text: str) -> tuple[bytes, int]:
    try:
        address, bits = netaddr.parse_prefix(text)
    except netaddr.AddressError as err:
        raise LibraryError(_PARSE_ERROR + _PARSE_ERROR + str(err)) from None
    if netaddr.is_4in6(address):
        raise LibraryError(
            _PARSE_ERROR + f"IPv4-mapped IPv6 address {netaddr._quote(text)} is not allowed")
    return address, bits


def from_string(text: str) -> object:
    address, bits = parse(text)
    return kube_types.CIDR(address=address, bits=bits)


def _is_cidr(text: str) -> bool:
    try:
        parse(text)
    except LibraryError:
        return False
    return True


def _contains_address(cidr: object, address: bytes) -> bool:
    own = cidr.address  # type: ignore[attr-defined]
    if len(own) != len(address):
        return False
    bits = cidr.bits  # type: ignore[attr-defined]
    return netaddr.masked(own, bits) == netaddr.masked(address, bits)


def _contains_ip(cidr: object, other: object) -> bool:
    return _contains_address(cidr, other.address)  # type: ignore[attr-defined]


def _contains_ip_string(cidr: object, text: str) -> bool:
    return _contains_address(cidr, ip.parse(text))


def _contains_cidr(cidr: object, other: object) -> bool:
    return (
        _contains_address(cidr, other.address)  # type: ignore[attr-defined]
        and cidr.bits <= other.bits  # type: ignore[attr-defined]
    )


def _contains_cidr_string(cidr: object, text: str) -> bool:
    return _contains_cidr(cidr, from_string(text))


def _ip(cidr: object) -> object:
    return kube_types.IP(address=cidr.address)  # type: ignore[attr-defined]


def _masked(cidr: object) -> object:
    bits = cidr.bits  # type: ignore[attr-defined]
    return kube_types.CIDR(address=netaddr.masked(cidr.address, bits), bits=bits)  # type: ignore[attr-defined]


def _prefix_length(cidr: object) -> int:
    return cidr.bits  # type: ignore[attr-defined]


def _member(name: str, overload: str, result: T, params: list[T], impl: object) -> tuple:
    return name, spec.overload(overload, result, [CIDR, *params], is_member=True, impl=impl)


OVERLOADS = [
    ("cidr", spec.overload("string_to_cidr", CIDR, [T.STRING], impl=from_string)),
    ("isCIDR", spec.overload("is_cidr", T.BOOL, [T.STRING], impl=_is_cidr)),
    _member("containsIP", "cidr_contains_ip_string", T.BOOL, [T.STRING], _contains_ip_string),
    _member("containsIP", "cidr_contains_ip_ip", T.BOOL, [IP], _contains_ip),
    _member("containsCIDR", "cidr_contains_cidr_string", T.BOOL, [T.STRING],
            _contains_cidr_string),
    _member("containsCIDR", "cidr_contains_cidr", T.BOOL, [CIDR], _contains_cidr),
    _member("ip", "cidr_ip", IP, [], _ip),
    _member("masked", "cidr_masked", CIDR, [], _masked),
    _member("prefixLength", "cidr_prefix_length", T.INT, [], _prefix_length),
]
