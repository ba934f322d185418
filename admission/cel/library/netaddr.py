"""Go net/netip address and prefix parsing, with netip's acceptance rules and error texts.

The `ip` and `cidr` libraries must accept exactly what netip.ParseAddr / ParsePrefix accept
(no IPv4 leading zeros, zones parsed then refused) and quote their errors, so the parser is
ported here rather than borrowed from `ipaddress`, which differs on both. Addresses are 4 or 16
bytes plus a zone; `format_address` prints netip's canonical text (RFC 5952 for IPv6).
"""

from __future__ import annotations

import ipaddress
import json


class AddressError(ValueError):
    """A netip parse error; str() is Go's text, e.g. `ParseAddr("1.2.3"): IPv4 address too short`."""


def _quote(text: str) -> str:
    # strconv.Quote for the printable ASCII that addresses contain; json escapes the rest alike.
    return json.dumps(text, ensure_ascii=False)


def _addr_error(whole: str, msg: str, at: str = "") -> AddressError:
    text = f"ParseAddr({_quote(whole)}): {msg}"
    if at:
        text += f" (at {_quote(at)})"
    return AddressError(text)


def _ipv4_fields(whole: str, start: int, end: int) -> bytes:
    octets: list[int] = []
    value, digits = 0, 0
    text = whole[start:end]
    for i, char in enumerate(text):
        if "0" <= char <= "9":
            if digits == 1 and value == 0:
                raise _addr_error(whole, "IPv4 field has octet with leading zero")
            value = value * 10 + ord(char) - 48
            digits += 1
            if value > 255:
                raise _addr_error(whole, "IPv4 field has value >255")
        elif char == ".":
            if i == 0 or i == len(text) - 1 or text[i - 1] == ".":
                raise _addr_error(whole, "IPv4 field must have at least one digit", text[i:])
            if len(octets) == 3:
                raise _addr_error(whole, "IPv4 address too long")
            octets.append(value)
            value, digits = 0, 0
        else:
            raise _addr_error(whole, "unexpected character", text[i:])
    if len(octets) < 3:
        raise _addr_error(whole, "IPv4 address too short")
    octets.append(value)
    return bytes(octets)


def _ipv6(whole: str) -> tuple[bytes, str]:
    text, zone = whole, ""
    if "%" in text:
        text, zone = text.split("%", 1)
        if not zone:
            raise _addr_error(whole, "zone must be a non-empty string")
    address = bytearray(16)
    ellipsis = -1
    if text.startswith("::"):
        ellipsis, text = 0, text[2:]
        if not text:
            return bytes(address), zone
    i = 0
    while i < 16:
        off, acc = 0, 0
        while off < len(text):
            char = text[off]
            if char in "0123456789abcdefABCDEF":
                acc = (acc << 4) + int(char, 16)
            else:
                break
            if off > 3:
                raise _addr_error(whole, "each group must have 4 or less digits", text)
            if acc > 0xFFFF:
                raise _addr_error(whole, "IPv6 field has value >=2^16", text)
            off += 1
        if off == 0:
            raise _addr_error(whole, "each colon-separated field must have at least one digit", text)
        if off < len(text) and text[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _addr_error(
                    whole, "embedded IPv4 address must replace the final 2 fields of the address",
                    text)
            if i + 4 > 16:
                raise _addr_error(
                    whole, "too many hex fields to fit an embedded IPv4 at the end of the address",
                    text)
            end = len(whole) - (len(zone) + 1 if zone else 0)
            address[i:i + 4] = _ipv4_fields(whole, end - len(text), end)
            text = ""
            i += 4
            break
        address[i], address[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        text = text[off:]
        if not text:
            break
        if text[0] != ":":
            raise _addr_error(whole, "unexpected character, want colon", text)
        if len(text) == 1:
            raise _addr_error(whole, "colon must be followed by more characters", text)
        text = text[1:]
        if text[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(whole, "multiple :: in address", text)
            ellipsis, text = i, text[1:]
            if not text:
                break
    if text:
        raise _addr_error(whole, "trailing garbage after address", text)
    if i < 16:
        if ellipsis < 0:
            raise _addr_error(whole, "address string too short")
        gap = 16 - i
        address[ellipsis + gap:16] = address[ellipsis:i]
        address[ellipsis:ellipsis + gap] = bytes(gap)
    elif ellipsis >= 0:
        raise _addr_error(whole, "the :: must expand to at least one field of zeros", text)
    return bytes(address), zone


def parse_addr(text: str) -> tuple[bytes, str]:
    """netip.ParseAddr: (4 or 16 address bytes, zone)."""
    for char in text:
        if char == ".":
            return _ipv4_fields(text, 0, len(text)), ""
        if char == ":":
            return _ipv6(text)
        if char == "%":
            raise _addr_error(text, "missing IPv6 address")
    raise _addr_error(text, "unable to parse IP")


def _prefix_error(whole: str, msg: str) -> AddressError:
    return AddressError(f"netip.ParsePrefix({_quote(whole)}): {msg}")


def parse_prefix(text: str) -> tuple[bytes, int]:
    """netip.ParsePrefix: (address bytes as written, prefix bits)."""
    slash = text.rfind("/")
    if slash < 0:
        raise _prefix_error(text, "no '/'")
    try:
        address, zone = parse_addr(text[:slash])
    except AddressError as err:
        raise _prefix_error(text, str(err)) from None
    if len(address) == 16 and zone:
        raise _prefix_error(text, "IPv6 zones cannot be present in a prefix")
    bits_text = text[slash + 1:]
    bad_bits = _prefix_error(text, f"bad bits after slash: {_quote(bits_text)}")
    if len(bits_text) > 1 and not "1" <= bits_text[0] <= "9":
        raise bad_bits
    if not bits_text or not bits_text.lstrip("+-").isdigit() or not bits_text.isascii():
        raise bad_bits
    bits = int(bits_text)
    if not 0 <= bits <= len(address) * 8:
        raise _prefix_error(text, "prefix length out of range")
    return address, bits


def is_4in6(address: bytes) -> bool:
    return len(address) == 16 and address[:12] == b"\0" * 10 + b"\xff\xff"


def format_address(address: bytes) -> str:
    """netip.Addr.String(): dotted quad, or RFC 5952 IPv6 (which `ipaddress` also prints)."""
    if len(address) == 4:
        return ".".join(str(octet) for octet in address)
    if is_4in6(address):
        return "::ffff:" + format_address(address[12:])
    return ipaddress.IPv6Address(address).compressed


def masked(address: bytes, bits: int) -> bytes:
    width = len(address) * 8
    value = int.from_bytes(address, "big")
    mask = ((1 << bits) - 1) << (width - bits) if bits else 0
    return (value & mask).to_bytes(len(address), "big")
