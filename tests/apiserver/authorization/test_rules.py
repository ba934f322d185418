"""PolicyRule matching and coverage (apiserver/authorization/rules.py), case by case as rule.go reads them."""

from __future__ import annotations

import pytest

from apiserver import auth
from apiserver.authorization import rules
from apiserver.authorization.attributes import Attributes

USER = auth.User("u", ("system:authenticated",))


def res(verb: str, resource: str, group: str = "", sub: str = "", name: str = "") -> Attributes:
    return Attributes(USER, verb, True, namespace="ns", api_group=group, resource=resource, subresource=sub, name=name)


def url(verb: str, path: str) -> Attributes:
    return Attributes(USER, verb, False, path=path)


CASES = [
    ("a literal rule allows its verb and resource", {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
     res("get", "pods"), True),
    ("another verb is not allowed", {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
     res("list", "pods"), False),
    ("the group must match", {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]}, res("get", "pods"), False),
    ("a resource grant does not cover its subresources",
     {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, res("get", "pods", sub="log"), False),
    ("resource/subresource names the subresource", {"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]},
     res("get", "pods", sub="log"), True),
    ("pods/log does not grant pods", {"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]},
     res("get", "pods"), False),
    ("*/scale grants every resource's scale", {"verbs": ["get"], "apiGroups": ["*"], "resources": ["*/scale"]},
     res("get", "deployments", "apps", "scale"), True),
    ("* resources covers subresources too", {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
     res("delete", "pods", sub="status"), True),
    ("resourceNames restrict to the named object", {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"],
                                                    "resourceNames": ["a"]}, res("get", "configmaps", name="b"), False),
    ("resourceNames allow the named object", {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"],
                                              "resourceNames": ["a"]}, res("get", "configmaps", name="a"), True),
    ("resourceNames never match a nameless list", {"verbs": ["list"], "apiGroups": [""], "resources": ["configmaps"],
                                                   "resourceNames": ["a"]}, res("list", "configmaps"), False),
    ("a resource rule says nothing about paths", {"verbs": ["get"], "apiGroups": ["*"], "resources": ["*"]},
     url("get", "/healthz"), False),
    ("a literal URL", {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, url("get", "/healthz"), True),
    ("a literal URL is not a prefix", {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}, url("get", "/healthz/etcd"),
     False),
    ("a trailing * is a prefix", {"verbs": ["get"], "nonResourceURLs": ["/healthz/*"]}, url("get", "/healthz/etcd"),
     True),
    ("a URL rule says nothing about resources", {"verbs": ["*"], "nonResourceURLs": ["*"]}, res("get", "pods"), False),
]


@pytest.mark.parametrize(("rule", "attrs", "allowed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_allows(rule: dict, attrs: Attributes, allowed: bool) -> None:
    assert rules.allows(rule, attrs) is allowed


def test_covers_lists_the_atomic_pieces_no_owner_rule_holds() -> None:
    owner = [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "configmaps"]},
             {"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["s1"]}]
    wanted = [{"verbs": ["get", "delete"], "apiGroups": [""], "resources": ["pods"]},
              {"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["s1"]},
              {"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}]
    missing = rules.covers(owner, wanted)
    assert missing == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]},
                       {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]


def test_compact_merges_verbs_and_prints_like_go() -> None:
    pieces = [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
              {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]},
              {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    printed = [rules.compact_string(r) for r in rules.compact(pieces)]
    assert printed == ['{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
                       '{NonResourceURLs:["/metrics"], Verbs:["get"]}']
