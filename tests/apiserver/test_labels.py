"""Label selectors: upstream grammar, canonical text, matching and exact error texts."""

from __future__ import annotations

import pytest

from apiserver import labels

KEY_NAME_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)

VALID = [
    pytest.param("", "", id="an empty selector is valid and prints as nothing"),
    pytest.param("app=web", "app=web", id="a single equality keeps its text"),
    pytest.param("app==web", "app==web", id="double equals stays double equals"),
    pytest.param("app!=web", "app!=web", id="not-equals prints with !="),
    pytest.param("tier in (b,a)", "tier in (a,b)", id="set values print sorted"),
    pytest.param("tier notin (b,a,b)", "tier notin (a,b)", id="duplicate set values collapse"),
    pytest.param("x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()", id="the upstream doc example with empty values"),
    pytest.param("!canary", "!canary", id="does-not-exist prints with a bang"),
    pytest.param("canary", "canary", id="a bare key means exists"),
    pytest.param("k>3,k<10", "k>3,k<10", id="gt and lt keep their order for one key"),
    pytest.param("z=1,a=2,m", "a=2,m,z=1", id="requirements are sorted by key"),
    pytest.param("  app  =  web ,\ttier in ( a , b )  ", "app=web,tier in (a,b)", id="whitespace around tokens is ignored"),
    pytest.param("x in (in,notin)", "x in (in,notin)", id="keywords are plain values inside a set"),
    pytest.param("in=notin", "in=notin", id="keywords are plain keys and values outside operators"),
    pytest.param("example.com/app=v1.2_b-3", "example.com/app=v1.2_b-3", id="a prefixed key and a dotted value"),
    pytest.param("app=", "app=", id="an empty exact value is allowed"),
    pytest.param("a in (,)", "a in ()", id="a lone comma in a set is the empty value"),
]


@pytest.mark.parametrize("text, canonical", VALID)
def test_valid_selectors_parse_to_their_canonical_text(text: str, canonical: str) -> None:
    assert str(labels.parse(text)) == canonical


INVALID = [
    pytest.param("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
                 id="two words without an operator"),
    pytest.param("x,", "found '', expected: identifier after ','", id="a trailing comma"),
    pytest.param("x=y z", "found 'z', expected: ',' or 'end of string'", id="junk after a requirement"),
    pytest.param("=a", "found '=', expected: !, identifier, or 'end of string'", id="a selector starting with an operator"),
    pytest.param("!a=b", "found '=', expected: ',' or 'end of string'", id="does-not-exist takes no value"),
    pytest.param("a=>b", "unable to parse requirement: found '>', expected: identifier", id="two operators in a row"),
    pytest.param("x in a", "unable to parse requirement: found 'a' expected: '('", id="a set without parentheses"),
    pytest.param("x in (a", "unable to parse requirement: found '', expected: ',' or ')'", id="an unclosed set"),
    pytest.param("x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'", id="a set missing a comma"),
    pytest.param("x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier", id="an operator inside a set"),
    pytest.param("a=-b", f'unable to parse requirement: values[0][a]: Invalid value: "-b": {VALUE_RULE}',
                 id="a value starting with a dash"),
    pytest.param("k>a", "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer",
                 id="gt with a non-integer"),
    pytest.param("k>-1", f'unable to parse requirement: values[0][k]: Invalid value: "-1": {VALUE_RULE}',
                 id="gt with a negative integer fails label-value validation"),
    pytest.param("a_b/c=1", f'unable to parse requirement: <nil>: Invalid value: "a_b/c": prefix part {SUBDOMAIN_RULE}',
                 id="a prefix that is not a DNS subdomain"),
    pytest.param("/c", 'unable to parse requirement: <nil>: Invalid value: "/c": prefix part must be non-empty',
                 id="an empty prefix"),
    pytest.param("-a", f'unable to parse requirement: <nil>: Invalid value: "-a": name part {KEY_NAME_RULE}',
                 id="a key starting with a dash"),
    pytest.param("a" * 64, f'unable to parse requirement: <nil>: Invalid value: "{"a" * 64}": name part must be no more than 63 bytes',
                 id="a 64-byte key name"),
    pytest.param("a=" + "b" * 64, f'unable to parse requirement: values[0][a]: Invalid value: "{"b" * 64}": must be no more than 63 bytes',
                 id="a 64-byte value"),
    pytest.param("a/b/c", 'unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key '
                 + KEY_NAME_RULE
                 + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                 id="a key with two slashes"),
]


@pytest.mark.parametrize("text, message", INVALID)
def test_invalid_selectors_fail_with_the_upstream_message(text: str, message: str) -> None:
    with pytest.raises(labels.SelectorError) as err:
        labels.parse(text)
    assert str(err.value) == message


MATCHES = [
    pytest.param("app=web", {"app": "web"}, True, id="equality matches the same value"),
    pytest.param("app=web", {}, False, id="equality needs the key"),
    pytest.param("app!=web", {}, True, id="not-equals matches a missing key"),
    pytest.param("app!=web", {"app": "web"}, False, id="not-equals rejects the value"),
    pytest.param("tier in (a,b)", {"tier": "b"}, True, id="in matches a member"),
    pytest.param("tier notin (a,b)", {}, True, id="notin matches a missing key"),
    pytest.param("tier notin (a,b)", {"tier": "a"}, False, id="notin rejects a member"),
    pytest.param("canary", {"canary": ""}, True, id="exists matches an empty value"),
    pytest.param("!canary", {"canary": ""}, False, id="does-not-exist rejects any value"),
    pytest.param("k>3", {"k": "4"}, True, id="gt compares integers"),
    pytest.param("k>3", {"k": "10"}, True, id="gt is numeric, not lexical"),
    pytest.param("k<3", {"k": "x"}, False, id="lt fails on a non-integer label"),
    pytest.param("k>3", {}, False, id="gt needs the key"),
    pytest.param("", {"anything": "x"}, True, id="the empty selector matches everything"),
    pytest.param("app=web,tier in (a,b),!canary,env!=prod,x,y notin (z),k>3",
                 {"app": "web", "tier": "a", "env": "dev", "x": "", "k": "4"}, True, id="the brief example matches"),
]


@pytest.mark.parametrize("text, object_labels, expected", MATCHES)
def test_selectors_match_labels_as_upstream(text: str, object_labels: dict[str, str], expected: bool) -> None:
    assert labels.parse(text).matches(object_labels) is expected


def test_an_empty_selector_reports_empty_and_a_real_one_does_not() -> None:
    assert labels.parse("").empty
    assert not labels.parse("a").empty


def test_exact_match_is_reported_for_equality_and_single_value_sets() -> None:
    sel = labels.parse("a=1,b in (2),c in (3,4),d!=5")
    assert [sel.requires_exact_match(k) for k in "abcde"] == ["1", "2", None, None, None]


FROM_SPEC = [
    pytest.param({}, "", True, id="an empty label selector selects everything"),
    pytest.param({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2", False, id="match labels become sorted equalities"),
    pytest.param(
        {"matchLabels": {"app": "web"}, "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["b", "a"]},
            {"key": "canary", "operator": "DoesNotExist"},
            {"key": "env", "operator": "NotIn", "values": ["prod"]},
            {"key": "x", "operator": "Exists"},
        ]},
        "app=web,!canary,env notin (prod),tier in (a,b),x", True,
        id="match expressions map to set-based requirements",
    ),
]


@pytest.mark.parametrize("spec, canonical, matches_web", FROM_SPEC)
def test_label_selector_objects_convert_like_upstream(spec: dict, canonical: str, matches_web: bool) -> None:
    sel = labels.from_label_selector(spec)
    assert str(sel) == canonical
    assert sel.matches({"app": "web", "tier": "a", "x": "1"}) is matches_web


def test_a_missing_label_selector_selects_nothing() -> None:
    sel = labels.from_label_selector(None)
    assert not sel.matches({}) and not sel.empty and str(sel) == ""


FROM_SPEC_ERRORS = [
    pytest.param({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}, '"Bogus" is not a valid label selector operator',
                 id="an unknown operator"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "In"}]},
                 "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
                 id="in without values"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
                 'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
                 id="exists with values"),
    pytest.param({"matchLabels": {"-a": "1"}}, f'key: Invalid value: "-a": name part {KEY_NAME_RULE}', id="a bad match-labels key"),
    pytest.param({"matchExpressions": [{"key": "-a", "operator": "In", "values": ["-x"]}]},
                 f'[key: Invalid value: "-a": name part {KEY_NAME_RULE}, values[0][-a]: Invalid value: "-x": {VALUE_RULE}]',
                 id="several errors are aggregated in brackets"),
]


@pytest.mark.parametrize("spec, message", FROM_SPEC_ERRORS)
def test_bad_label_selector_objects_fail_with_the_upstream_message(spec: dict, message: str) -> None:
    with pytest.raises(labels.SelectorError) as err:
        labels.from_label_selector(spec)
    assert str(err.value) == message


def test_label_sets_format_sorted() -> None:
    assert labels.format_set({"b": "2", "a": "1"}) == "a=1,b=2"
    assert labels.format_set({}) == ""
