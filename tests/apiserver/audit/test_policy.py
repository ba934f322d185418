"""The audit policy: upstream's first-matching-rule semantics, and its refusals of a bad file."""

from __future__ import annotations

import pytest

from apiserver.audit import policy
from apiserver.audit.policy import PolicyError
from apiserver.auth import User
from apiserver.authorization.attributes import Attributes

_POLICY = b"""
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: RequestResponse
  omitStages: [ResponseStarted]
  omitManagedFields: false
  resources:
  - group: ""
    resources: ["secrets"]
    resourceNames: ["admin-token"]
- level: Request
  userGroups: ["system:nodes"]
  resources:
  - group: ""
    resources: ["pods/status", "*/binding"]
- level: Metadata
  namespaces: ["kube-system", ""]
- level: Request
  resources:
  - group: apps
    resources: ["deployments/*"]
  - group: batch
- level: Metadata
  nonResourceURLs: ["*"]
"""


def _request(user: str = "alice", groups: tuple[str, ...] = ("system:authenticated",), group: str = "",
             **kw: object) -> Attributes:
    base: dict[str, object] = dict(verb="get", is_resource=True, namespace="default", api_group=group)
    base.update(kw)
    return Attributes(User(user, groups), **base)  # type: ignore[arg-type]


@pytest.mark.parametrize("request_, level", [
    (_request(user="system:kube-proxy", verb="watch", resource="endpoints"), "None"),
    (_request(user="system:kube-proxy", verb="list", resource="endpoints"), "None"),  # falls to no rule
    (_request(is_resource=False, path="/healthz/etcd", namespace=""), "None"),
    (_request(is_resource=False, path="/version", namespace=""), "None"),
    (_request(is_resource=False, path="/metrics", namespace=""), "Metadata"),
    (_request(resource="secrets", name="admin-token"), "RequestResponse"),
    (_request(resource="secrets", name="other"), "None"),
    (_request(groups=("system:nodes",), resource="pods", subresource="status"), "Request"),
    (_request(groups=("system:nodes",), resource="pods", subresource="binding"), "Request"),
    (_request(groups=("system:nodes",), resource="pods"), "None"),
    (_request(namespace="kube-system", resource="configmaps"), "Metadata"),
    (_request(namespace="", resource="nodes"), "Metadata"),
    (_request(group="apps", resource="deployments", subresource="scale"), "Request"),
    (_request(group="apps", resource="deployments"), "Request"),  # "deployments/*" covers the resource too
    (_request(group="batch", resource="jobs"), "Request"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_the_first_matching_rule_gives_the_level(request_: Request, level: str) -> None:
    assert policy.parse(_POLICY).evaluate(request_).level == level


def test_stages_add_up_and_a_rules_omit_managed_fields_wins() -> None:
    loaded = policy.parse(_POLICY)
    secret = loaded.evaluate(_request(resource="secrets", name="admin-token"))
    assert secret.omit_stages == {"RequestReceived", "ResponseStarted"} and secret.omit_managed_fields is False
    jobs = loaded.evaluate(_request(group="batch", resource="jobs"))
    assert jobs.omit_stages == {"RequestReceived"} and jobs.omit_managed_fields is True


@pytest.mark.parametrize("text, message", [
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n",
     'rules[0].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", "RequestResponse"'),
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- verbs: [get]\n", "rules[0].level: Required value"),
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n", "loaded illegal policy with 0 rules"),
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Later]\nrules:\n- level: None\n",
     'omitStages[0]: Unsupported value: "Later": supported values: "RequestReceived", "ResponseStarted", '
     '"ResponseComplete", "Panic"'),
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [/x]\n  namespaces: [a]\n",
     "rules cannot apply to both regular resources and non-resource URLs"),
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [healthz]\n",
     "non-resource URL rules must begin with a '/' character"),
    (b"apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n",
     'no kind "Policy" is registered for version "audit.k8s.io/v1beta1"'),
    (b"rules: [\n", "failed decoding: error converting YAML to JSON"),
])
def test_a_malformed_policy_is_refused_with_upstreams_text(text: bytes, message: str) -> None:
    with pytest.raises(PolicyError) as refused:
        policy.parse(text)
    assert message in str(refused.value)


def test_a_missing_file_names_its_path(tmp_path: object) -> None:
    with pytest.raises(PolicyError, match="failed to read file path"):
        policy.load("/nonexistent/policy.yaml")
