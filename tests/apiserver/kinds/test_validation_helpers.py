"""The shared checks added to apiserver/validation.py: value rendering, IPs, CIDRs, quantities, ports."""

from __future__ import annotations

from decimal import Decimal

import pytest

from apiserver import validation as v


@pytest.mark.parametrize("value, rendered", [
    ("a", '"a"'), (5, "5"), (True, "true"), (None, "null"), (["10.0.0.1"], '["10.0.0.1"]'),
    ({"matchLabels": {"a": "b"}}, '{"matchLabels":{"a":"b"}}'),
], ids=["strings are quoted", "integers are bare", "booleans are lower case", "nil is null", "lists are JSON", "structs are JSON"])
def test_bad_values_render_as_1_36_does(value, rendered):
    assert v.render_value(value) == rendered


@pytest.mark.parametrize("ip, problems", [
    ("10.1.2.3", []), ("2001:db8::1", []),
    ("010.1.2.3", ["must not have leading 0s"]),
    ("::ffff:10.1.2.3", ["must not be an IPv4-mapped IPv6 address"]),
    ("10.1.2", ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]),
], ids=["IPv4", "IPv6", "leading zeros", "IPv4-mapped IPv6", "not an address"])
def test_strict_ip_validation(ip, problems):
    assert [c["message"].split(": ", 2)[2] for c in v.ip_address(ip, "f")] == problems


@pytest.mark.parametrize("cidr, problem", [
    ("10.0.0.0/8", None), ("10.0.0.1/8", "must not have bits set beyond the prefix length"),
    ("10.0.0.0/08", "must not have leading 0s in IP or prefix length"),
    ("10.0.0.0/33", "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
], ids=["a network", "host bits set", "a zero-padded prefix", "a prefix too long"])
def test_strict_cidr_validation(cidr, problem):
    causes = v.cidr(cidr, "f")
    assert (causes[0]["message"].endswith(problem) if problem else causes == [])


@pytest.mark.parametrize("text, value", [
    ("1", Decimal(1)), ("100m", Decimal("0.1")), ("1Gi", Decimal(2 ** 30)), ("1G", Decimal(10 ** 9)),
    ("1e3", Decimal(1000)), ("1.5Ki", Decimal(1536)), ("abc", None), ("1Gb", None),
], ids=["a plain number", "millis", "binary suffix", "decimal suffix", "an exponent", "a fraction", "not a number", "an unknown suffix"])
def test_quantities_parse_exactly(text, value):
    assert v.parse_quantity(text) == value


@pytest.mark.parametrize("name, problems", [
    ("http", []), ("h" * 16, ["must be no more than 15 characters"]), ("80", ["must contain at least one letter (a-z)"]),
    ("a--b", ["must not contain consecutive hyphens"]),
], ids=["a service name", "too long", "digits only", "double hyphen"])
def test_port_names(name, problems):
    assert v.port_name(name) == problems


@pytest.mark.parametrize("selector, labels, matches", [
    ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "3"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"b": "1"}, True),
    ({}, {}, True),
], ids=["matchLabels are a subset", "In needs one of the values", "DoesNotExist needs absence", "empty selects everything"])
def test_selector_matching(selector, labels, matches):
    assert v.selector_matches(selector, labels) is matches


def test_selector_expressions_need_values_for_in():
    causes = v.label_selector({"matchExpressions": [{"key": "a", "operator": "In"}]}, "spec.selector")
    assert [c["message"] for c in causes] == ["Required value: must be specified when `operator` is 'In' or 'NotIn'"]
