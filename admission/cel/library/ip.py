"""Kubernetes `ip` library: `ip()`, `isIP()`, `ip.isCanonical()` and the IP address methods.

Addresses parse as netip.ParseAddr does (see `netaddr.py`), then zones and IPv4-mapped IPv6
addresses are refused with the library's messages. The predicates follow netip.Addr's
(IsGlobalUnicast, IsLinkLocalMulticast…). Registered by `admission.cel.library`; values are
`kube_types.IP` messages holding the 4- or 16-byte address.
"""

from __future__ import annotations

from cel_expr_python import cel

from admission.cel.library import spec
from admission.cel import kube_types
from admission.cel.library import netaddr
from admission.cel.library.failure import LibraryError

T = cel.Type
IP = kube_types.IP_TYPE


def parse(text: str) -> bytes:
    """The address bytes, or LibraryError with the upstream message."""
    try:
        address, zone = netaddr.parse_addr(text)
    except netaddr.AddressError as err:
        raise LibraryError(
            f"IP Address {netaddr._quote(text)} parse error during conversion from string: {err}"
        ) from None
    if zone:
        raise LibraryError(f"IP address {netaddr._quote(text)} with zone value is not allowed")
    if netaddr.is_4in6(address):
        raise LibraryError(f"IPv4-mapped IPv6 address {netaddr._quote(text)} is not allowed")
    return address


def from_string(text: str) -> object:
    return kube_types.IP(address=parse(text))


def _is_ip(text: str) -> bool:
    try:
        parse(text)
    except LibraryError:
        return False
    return True


def _is_canonical(text: str) -> bool:
    return netaddr.format_address(parse(text)) == text


def _family(message: object) -> int:
    return 4 if len(message.address) == 4 else 6  # type: ignore[attr-defined]


def _is_unspecified(message: object) -> bool:
    return not any(message.address)  # type: ignore[attr-defined]


def _is_loopback(message: object) -> bool:
    address = message.address  # type: ignore[attr-defined]
    if len(address) == 4:
        return address[0] == 127
    return address == b"\0" * 15 + b"\1"


def _is_multicast(address: bytes) -> bool:
    return address[0] >> 4 == 0xE if len(address) == 4 else address[0] == 0xFF


def _is_link_local_multicast(message: object) -> bool:
    address = message.address  # type: ignore[attr-defined]
    if len(address) == 4:
        return address[:3] == b"\xe0\0\0"
    return address[0] == 0xFF and address[1] & 0xCF == 0x02


def _link_local_unicast(address: bytes) -> bool:
    if len(address) == 4:
        return address[:2] == b"\xa9\xfe"
    return address[0] == 0xFE and address[1] & 0xC0 == 0x80


def _is_link_local_unicast(message: object) -> bool:
    return _link_local_unicast(message.address)  # type: ignore[attr-defined]


def _is_global_unicast(message: object) -> bool:
    address = message.address  # type: ignore[attr-defined]
    if len(address) == 4 and address in (b"\0\0\0\0", b"\xff\xff\xff\xff"):
        return False
    return not (
        _is_unspecified(message) or _is_loopback(message) or _is_multicast(address)
        or _link_local_unicast(address)
    )


def _member(name: str, overload: str, result: T, impl: object) -> tuple:
    return name, spec.overload(overload, result, [IP], is_member=True, impl=impl)


OVERLOADS = [
    ("ip", spec.overload("string_to_ip", IP, [T.STRING], impl=from_string)),
    ("isIP", spec.overload("is_ip", T.BOOL, [T.STRING], impl=_is_ip)),
    ("string", spec.overload("ip_to_string", T.STRING, [IP],
                            impl=lambda m: netaddr.format_address(m.address))),
    ("ip.isCanonical", spec.overload("ip_is_canonical", T.BOOL, [T.STRING], impl=_is_canonical)),
    _member("family", "ip_family", T.INT, _family),
    _member("isUnspecified", "ip_is_unspecified", T.BOOL, _is_unspecified),
    _member("isLoopback", "ip_is_loopback", T.BOOL, _is_loopback),
    _member("isLinkLocalMulticast", "ip_is_link_local_multicast", T.BOOL,
            _is_link_local_multicast),
    _member("isLinkLocalUnicast", "ip_is_link_local_unicast", T.BOOL, _is_link_local_unicast),
    _member("isGlobalUnicast", "ip_is_global_unicast", T.BOOL, _is_global_unicast),
]
