"""Which FlowSchema and priority level upstream's default configuration gives each kind of caller.

The stored default objects (`defaults.py`) are digested by `config.Config`, as the maintenance
loop does, and requests are classified by `Config.classify`; the expectations are what
a kube-apiserver 1.36 with its default FlowSchemas answers (the same names in its PF headers).
"""

from __future__ import annotations

import math

import pytest

from apiserver.auth import User
from apiserver.flowcontrol import config, defaults
from apiserver.requestinfo import parse


def _objects(table: dict, kind: str) -> list[dict]:
    return [{"kind": kind, "metadata": {"name": name, "uid": f"uid-{name}"}, "spec": spec} for name, spec in table.items()]


@pytest.fixture
def cfg() -> config.Config:
    c = config.Config()
    dangling = c.apply(_objects({**defaults.MANDATORY_SCHEMAS, **defaults.SUGGESTED_SCHEMAS}, "FlowSchema"),
                       _objects({**defaults.MANDATORY_LEVELS, **defaults.SUGGESTED_LEVELS}, "PriorityLevelConfiguration"))
    assert dangling == set()
    return c


AUTH = "system:authenticated"
CASES = [
    # (user, groups, method, path) → (flow schema, priority level)
    ("kubernetes-admin", ("system:masters", AUTH), "GET", "/api/v1/pods", "exempt", "exempt"),
    ("jane", (AUTH,), "GET", "/healthz", "probes", "exempt"),
    ("system:anonymous", ("system:unauthenticated",), "GET", "/readyz", "probes", "exempt"),
    ("system:anonymous", ("system:unauthenticated",), "GET", "/version", "global-default", "global-default"),
    ("system:node:n1", ("system:nodes", AUTH), "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1",
     "system-node-high", "node-high"),
    ("system:node:n1", ("system:nodes", AUTH), "PATCH", "/api/v1/nodes/n1/status", "system-node-high", "node-high"),
    ("system:node:n1", ("system:nodes", AUTH), "GET", "/api/v1/namespaces/a/pods", "system-nodes", "system"),
    ("system:kube-scheduler", (AUTH,), "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler",
     "system-leader-election", "leader-election"),
    ("system:kube-scheduler", (AUTH,), "POST", "/api/v1/namespaces/a/pods/p/binding", "kube-scheduler", "workload-high"),
    ("system:kube-controller-manager", (AUTH,), "PUT", "/api/v1/namespaces/a/endpoints/e", "endpoint-controller",
     "workload-high"),
    ("system:kube-controller-manager", (AUTH,), "GET", "/apis/apps/v1/deployments", "kube-controller-manager",
     "workload-high"),
    ("system:serviceaccount:kube-system:generic-garbage-collector",
     ("system:serviceaccounts", "system:serviceaccounts:kube-system", AUTH), "GET", "/api/v1/pods",
     "kube-system-service-accounts", "workload-high"),
    ("system:serviceaccount:kube-system:x", ("system:serviceaccounts", "system:serviceaccounts:kube-system", AUTH),
     "PUT", "/apis/coordination.k8s.io/v1/namespaces/team/leases/x", "system-leader-election", "leader-election"),
    ("system:serviceaccount:team:robot", ("system:serviceaccounts", "system:serviceaccounts:team", AUTH),
     "GET", "/api/v1/namespaces/team/configmaps", "service-accounts", "workload-low"),
    ("jane", (AUTH,), "GET", "/api/v1/namespaces/team/configmaps", "global-default", "global-default"),
    ("jane", (AUTH,), "POST", "/apis/batch/v1/namespaces/team/jobs", "global-default", "global-default"),
]


@pytest.mark.parametrize("user,groups,method,path,schema,level", CASES)
def test_each_caller_lands_in_upstreams_flow_schema_and_level(cfg, user, groups, method, path, schema, level):
    found = cfg.classify(User(user, groups), parse(method, path))
    assert found is not None
    assert (found.schema.name, found.level.name) == (schema, level)
    assert (found.schema.uid, found.level.uid) == (f"uid-{schema}", f"uid-{level}")


def test_seats_are_the_servers_600_split_by_shares_as_upstream(cfg):
    shares = {"catch-all": 5, "system": 30, "node-high": 40, "leader-election": 10, "workload-high": 40,
              "workload-low": 100, "global-default": 20}
    total = sum(shares.values())  # the exempt level's 0 shares count too
    for name, value in shares.items():
        assert cfg.levels[name].nominal == math.ceil(600 * value / total), name
    assert cfg.levels["global-default"].nominal == 49 and cfg.levels["workload-low"].nominal == 245
    assert cfg.levels["exempt"].state.exempt


def test_by_user_flows_differ_per_user_and_by_namespace_flows_per_namespace(cfg):
    def flow(user, groups, path):
        return cfg.classify(User(user, groups), parse("GET", path)).flow_hash
    assert flow("a", (AUTH,), "/api/v1/namespaces/x/pods") == flow("a", (AUTH,), "/api/v1/namespaces/y/pods")
    assert flow("a", (AUTH,), "/api/v1/pods") != flow("b", (AUTH,), "/api/v1/pods")
    kcm = "system:kube-controller-manager"
    assert flow(kcm, (AUTH,), "/api/v1/namespaces/x/pods") != flow(kcm, (AUTH,), "/api/v1/namespaces/y/pods")


def test_a_flow_schema_naming_a_missing_level_is_dangling_and_skipped():
    c = config.Config()
    schemas = _objects(defaults.MANDATORY_SCHEMAS, "FlowSchema") + [
        {"metadata": {"name": "mine", "uid": "u"}, "spec": {"priorityLevelConfiguration": {"name": "nope"},
                                                             "matchingPrecedence": 5,
                                                             "rules": defaults.MANDATORY_SCHEMAS["catch-all"]["rules"]}}]
    assert c.apply(schemas, _objects(defaults.MANDATORY_LEVELS, "PriorityLevelConfiguration")) == {"mine"}
    found = c.classify(User("jane", (AUTH,)), parse("GET", "/api/v1/pods"))
    assert found.schema.name == "catch-all" and found.level.name == "catch-all"


def test_precedence_ties_go_to_the_name_first_in_order():
    rules = defaults.MANDATORY_SCHEMAS["catch-all"]["rules"]
    spec = {"priorityLevelConfiguration": {"name": "catch-all"}, "matchingPrecedence": 50, "rules": rules}
    c = config.Config()
    c.apply([{"metadata": {"name": n, "uid": n}, "spec": spec} for n in ("zeta", "alpha")],
            _objects(defaults.MANDATORY_LEVELS, "PriorityLevelConfiguration"))
    assert c.classify(User("jane", (AUTH,)), parse("GET", "/api/v1/pods")).schema.name == "alpha"


def test_non_resource_patterns_match_exactly_by_prefix_star_or_everything():
    from apiserver.flowcontrol import matching
    rule = matching.compile_rules([{"subjects": [{"kind": "Group", "group": {"name": AUTH}}],
                                    "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics", "/debug/*"]}]}])[0]

    def req(path, verb="get"):
        return matching.Request("jane", (AUTH,), False, verb, path=path)
    assert rule.matches(req("/metrics")) and rule.matches(req("/debug/pprof")) and rule.matches(req("/debug"))
    assert not rule.matches(req("/metricsx")) and not rule.matches(req("/metrics", "post"))
    assert not rule.matches(matching.Request("jane", (AUTH,), True, "get", "", "pods"))
