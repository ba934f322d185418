"""Validation shared by every kind: object names, labels, annotations, immutable metadata.

The messages are kube's (k8s.io/apimachinery validation and apimachinery/pkg/api/validation), so
a client sees the same `Invalid` causes as from a real server. Called by `strategy.py`; per-kind
rules live beside their strategy in `apiserver/kinds/`.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import re
from decimal import Decimal
from typing import Any

from apiserver import labels as labels_module
from apiserver.errors import field_error

Causes = list[dict[str, str]]

_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME_RE = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_TOTAL_ANNOTATION_SIZE = 256 * 1024


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def invalid_value(field: str, value: Any, detail: str) -> dict[str, str]:
    return field_error("FieldValueInvalid", field, f"Invalid value: {_quote(value)}: {detail}")


def dns1123_label(value: str) -> list[str]:
    problems = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if not _LABEL_RE.match(value):
        problems.append(DNS1123_LABEL_MSG)
    return problems


def dns1123_subdomain(value: str) -> list[str]:
    problems = []
    if len(value) > 253:
        problems.append("must be no more than 253 characters")
    if not _SUBDOMAIN_RE.match(value):
        problems.append(DNS1123_SUBDOMAIN_MSG)
    return problems


def path_segment_name(value: str) -> list[str]:
    if value in (".", ".."):
        return [f'may not be \'{value}\'']
    for bad in ("/", "%"):
        if bad in value:
            return [f"may not contain '{bad}'"]
    return []


NAME_RULES = {"label": dns1123_label, "subdomain": dns1123_subdomain, "path": path_segment_name}


def qualified_name(value: str) -> list[str]:
    """A label or annotation key: optional DNS subdomain prefix, '/', and a name part."""
    problems = []
    prefix, _, name = value.rpartition("/")
    if "/" in value:
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems += ["prefix part " + p for p in dns1123_subdomain(prefix)]
    if not name:
        problems.append("name part must be non-empty")
    else:
        if len(name) > 63:
            problems.append("name part must be no more than 63 characters")
        if not _QUALIFIED_NAME_RE.match(name):
            problems.append(_QUALIFIED_NAME_MSG)
    return problems


def label_value(value: str) -> list[str]:
    problems = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.match(value):
        problems.append(_LABEL_VALUE_MSG)
    return problems


def labels(values: Any, field: str) -> Causes:
    causes: Causes = []
    if not isinstance(values, dict):
        return causes
    for key, value in values.items():
        for problem in qualified_name(key):
            causes.append(invalid_value(field, key, problem))
        for problem in label_value(value if isinstance(value, str) else str(value)):
            causes.append(invalid_value(f"{field}", value, problem))
    return causes


def annotations(values: Any, field: str) -> Causes:
    causes: Causes = []
    if not isinstance(values, dict):
        return causes
    total = 0
    for key, value in values.items():
        for problem in qualified_name(key.lower()):
            causes.append(invalid_value(field, key, problem))
        total += len(key) + len(value or "")
    if total > _TOTAL_ANNOTATION_SIZE:
        causes.append(field_error("FieldValueTooLong", field, f"Too long: must have at most {_TOTAL_ANNOTATION_SIZE} bytes"))
    return causes


def object_meta(meta: dict[str, Any], *, namespaced: bool, name_rule: str = "subdomain") -> Causes:
    causes: Causes = []
    name = meta.get("name") or ""
    if not name:
        if not meta.get("generateName"):
            causes.append(field_error("FieldValueRequired", "metadata.name", "Required value: name or generateName is required"))
    else:
        for problem in NAME_RULES[name_rule](name):
            causes.append(invalid_value("metadata.name", name, problem))
    if namespaced:
        if not meta.get("namespace"):
            causes.append(field_error("FieldValueRequired", "metadata.namespace", "Required value"))
    elif meta.get("namespace"):
        causes.append(field_error("FieldValueForbidden", "metadata.namespace", "Forbidden: not allowed on this type"))
    causes += labels(meta.get("labels"), "metadata.labels")
    causes += annotations(meta.get("annotations"), "metadata.annotations")
    return causes


def object_meta_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    causes: Causes = []
    for key in ("name", "namespace", "uid", "creationTimestamp"):
        if new.get(key) != old.get(key):
            causes.append(invalid_value(f"metadata.{key}", new.get(key), "field is immutable"))
    return causes


# --- field errors as field.Error renders them (k8s.io/apimachinery/pkg/util/validation/field) -------
# Since 1.34 a bad value that is not a plain string, number or bool renders as compact JSON.


def render_value(value: Any) -> str:
    """A bad value as `field.Error.ErrorBody` prints it: strings quoted, scalars bare, the rest JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return _quote(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def invalid(field: str, value: Any, detail: str) -> dict[str, str]:
    return field_error("FieldValueInvalid", field, f"Invalid value: {render_value(value)}: {detail}")


def required(field: str, detail: str = "") -> dict[str, str]:
    return field_error("FieldValueRequired", field, f"Required value: {detail}" if detail else "Required value")


def forbidden(field: str, detail: str) -> dict[str, str]:
    return field_error("FieldValueForbidden", field, f"Forbidden: {detail}")


def duplicate(field: str, value: Any) -> dict[str, str]:
    return field_error("FieldValueDuplicate", field, f"Duplicate value: {render_value(value)}")


def not_found(field: str, value: Any, detail: str = "") -> dict[str, str]:
    message = f"Not found: {render_value(value)}"
    return field_error("FieldValueNotFound", field, f"{message}: {detail}" if detail else message)


def not_supported(field: str, value: Any, supported: list[str]) -> dict[str, str]:
    choices = ", ".join(_quote(v) for v in supported)
    return field_error("FieldValueNotSupported", field, f"Unsupported value: {render_value(value)}: supported values: {choices}")


def too_long(field: str, limit: int) -> dict[str, str]:
    return field_error("FieldValueTooLong", field, f"Too long: must have at most {limit} bytes")


FIELD_IMMUTABLE = "field is immutable"
NEGATIVE = "must be greater than or equal to 0"


def immutable(field: str, new: Any, old: Any) -> Causes:
    """apimachinery's ValidateImmutableField: the new value is the one reported."""
    return [] if new == old else [invalid(field, new, FIELD_IMMUTABLE)]


def nonnegative(field: str, value: Any) -> Causes:
    return [invalid(field, value, NEGATIVE)] if isinstance(value, int) and value < 0 else []


def inclusive_range(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


# --- names and keys ------------------------------------------------------------------------------

_DNS1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_CONFIG_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]+$")
_CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
    "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)


def dns1035_label(value: str) -> list[str]:
    problems = []
    if len(value) > 63:
        problems.append("must be no more than 63 characters")
    if not _DNS1035_RE.match(value):
        problems.append(DNS1035_LABEL_MSG)
    return problems


NAME_RULES["dns1035"] = dns1035_label


def config_map_key(value: str) -> list[str]:
    """IsConfigMapKey: the keys of ConfigMap/Secret data and of projected items."""
    problems = []
    if len(value) > 253:
        problems.append("must be no more than 253 characters")
    if not _CONFIG_KEY_RE.match(value):
        problems.append(_CONFIG_KEY_MSG)
    if value == ".":
        problems.append("must not be '.'")
    elif value == "..":
        problems.append("must not be '..'")
    elif value.startswith(".."):
        problems.append("must not start with '..'")
    return problems


def label_name(value: str, field: str) -> Causes:
    """ValidateLabelName: a qualified name, as label keys, toleration keys and topology keys are."""
    return [invalid(field, value, problem) for problem in qualified_name(value)]


# --- ports and addresses -----------------------------------------------------------------------------

_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+$")
_PORT_NAME_LETTER = re.compile(r"[a-z]")


def port_number(value: Any) -> list[str]:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 65535:
        return [inclusive_range(1, 65535)]
    return []


def port_name(value: str) -> list[str]:
    """IsValidPortName: an IANA_SVC_NAME."""
    problems = []
    if len(value) > 15:
        problems.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.match(value):
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER.search(value):
        problems.append("must contain at least one letter (a-z)")
    if "--" in value:
        problems.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        problems.append("must not begin or end with a hyphen")
    return problems


def _sloppy_ip(value: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, bool] | None:
    """Go's ParseIPSloppy: also takes IPv4 octets with leading zeros (read as decimal)."""
    try:
        return ipaddress.ip_address(value), False
    except ValueError:
        pass
    octets = value.split(".")
    if len(octets) == 4 and all(o.isdigit() and len(o) <= 3 and int(o) <= 255 for o in octets):
        return ipaddress.IPv4Address(".".join(str(int(o)) for o in octets)), True
    return None


def ip_address(value: str, field: str) -> Causes:
    """IsValidIP with StrictIPCIDRValidation (beta, on in 1.36)."""
    parsed = _sloppy_ip(value) if isinstance(value, str) else None
    if parsed is None:
        return [invalid(field, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
    address, leading_zeros = parsed
    causes = []
    if leading_zeros:
        causes.append(invalid(field, value, "must not have leading 0s"))
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        causes.append(invalid(field, value, "must not be an IPv4-mapped IPv6 address"))
    return causes


def non_special_ip(value: str, field: str) -> Causes:
    """ValidateNonSpecialIP: what external IPs and endpoints may not be."""
    parsed = _sloppy_ip(value)
    if parsed is None:
        return [invalid(field, value, "must be a valid IP address")]
    address = parsed[0]
    causes = []
    if address.is_unspecified:
        causes.append(invalid(field, value, f"may not be unspecified ({value})"))
    if address.is_loopback:
        causes.append(invalid(field, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    if address.is_link_local:
        causes.append(invalid(field, value, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
    if address in ipaddress.ip_network("224.0.0.0/24") or address in ipaddress.ip_network("ff02::/16"):
        causes.append(invalid(field, value, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
    return causes


def cidr(value: str, field: str) -> Causes:
    """IsValidCIDR with StrictIPCIDRValidation."""
    address_text, slash, length_text = value.rpartition("/") if isinstance(value, str) else ("", "", "")
    parsed = _sloppy_ip(address_text) if slash and length_text.isdigit() else None
    maximum = 32 if parsed and isinstance(parsed[0], ipaddress.IPv4Address) else 128
    if parsed is None or int(length_text) > maximum:
        return [invalid(field, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]
    address, leading_zeros = parsed
    if leading_zeros or (len(length_text) > 1 and length_text.startswith("0")):
        return [invalid(field, value, "must not have leading 0s in IP or prefix length")]
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return [invalid(field, value, "must not have an IPv4-mapped IPv6 address")]
    if ipaddress.ip_network(f"{address}/{length_text}", strict=False).network_address != address:
        return [invalid(field, value, "must not have bits set beyond the prefix length")]
    return []


# --- quantities ------------------------------------------------------------------------------------

_QUANTITY_RE = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$")
_QUANTITY_SUFFIX = {
    "": 1, "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": 10**3, "M": 10**6,
    "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30,
    "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}
QUANTITY_MSG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def parse_quantity(value: Any) -> Decimal | None:
    """resource.Quantity's value as an exact decimal; None when it does not parse."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    return _parse_text(value) if isinstance(value, str) else None


@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> Decimal | None:
    # A pod's few quantities are read by validation, QoS, LimitRanger and ResourceQuota alike, and
    # most writes repeat the same handful ("100m", "128Mi"): parse each text once (Decimals are immutable).
    match = _QUANTITY_RE.match(value)
    if not match:
        return None
    number, suffix = Decimal(match.group(1)), match.group(2) or ""
    if suffix[:1] in ("e", "E"):
        return number * (Decimal(10) ** int(suffix[1:]))
    return number * Decimal(_QUANTITY_SUFFIX[suffix])


# --- label selectors (metav1 validation.ValidateLabelSelector) -------------------------------------

_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def label_selector(selector: Any, field: str) -> Causes:
    if not isinstance(selector, dict):
        return []
    causes = labels(selector.get("matchLabels"), f"{field}.matchLabels")
    for i, requirement in enumerate(selector.get("matchExpressions") or []):
        path = f"{field}.matchExpressions[{i}]"
        operator, values = requirement.get("operator"), requirement.get("values") or []
        if operator in ("In", "NotIn") and not values:
            causes.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif operator in ("Exists", "DoesNotExist") and values:
            causes.append(forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        elif operator not in _SELECTOR_OPERATORS:
            causes.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
        causes += label_name(requirement.get("key") or "", f"{path}.key")
        for j, value in enumerate(values):
            causes += [invalid(f"{path}.values[{j}]", value, p) for p in label_value(value)]
    return causes


def selector_matches(selector: dict[str, Any], target: dict[str, str]) -> bool:
    """Does a metav1.LabelSelector select these labels? (An empty selector selects everything.)"""
    try:
        return labels_module.from_label_selector(selector).matches(target)
    except labels_module.SelectorError:
        return False  # an invalid selector selects nothing; validation reports it on its own field
