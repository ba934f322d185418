"""Upstream's mandatory and suggested APF configuration objects, as data (kube-apiserver 1.36).

The mandatory ones (`exempt` and `catch-all`, each a FlowSchema and a PriorityLevelConfiguration)
always exist with upstream's spec; the suggested ones exist too, but keep a spec an admin changed
once its `apf.kubernetes.io/autoupdate-spec` annotation says "false". `maintenance.py` reads these
tables to create and keep the objects; nothing else needs them. Names, precedences, rules, shares,
lendable percents and queue shapes are upstream's `bootstrap/default.go`.
"""

from __future__ import annotations

from typing import Any

GROUP = "flowcontrol.apiserver.k8s.io"
API_VERSION = f"{GROUP}/v1"
AUTOUPDATE = "apf.kubernetes.io/autoupdate-spec"

MASTERS, NODES = "system:masters", "system:nodes"
AUTHENTICATED, UNAUTHENTICATED = "system:authenticated", "system:unauthenticated"
SERVICE_ACCOUNTS = "system:serviceaccounts"
KCM, SCHEDULER = "system:kube-controller-manager", "system:kube-scheduler"


def _groups(*names: str) -> list[dict[str, Any]]:
    return [{"kind": "Group", "group": {"name": n}} for n in names]


def _users(*names: str) -> list[dict[str, Any]]:
    return [{"kind": "User", "user": {"name": n}} for n in names]


def _service_account(namespace: str, name: str) -> dict[str, Any]:
    return {"kind": "ServiceAccount", "serviceAccount": {"namespace": namespace, "name": name}}


def _resources(verbs: list[str], groups: list[str], resources: list[str], *, cluster: bool,
               namespaces: list[str]) -> dict[str, Any]:
    rule: dict[str, Any] = {"verbs": verbs, "apiGroups": groups, "resources": resources}
    if cluster:
        rule["clusterScope"] = True
    rule["namespaces"] = namespaces
    return rule


_EVERYTHING = [_resources(["*"], ["*"], ["*"], cluster=True, namespaces=["*"])]
_ALL_URLS = [{"verbs": ["*"], "nonResourceURLs": ["*"]}]
_ELECTION = ["get", "create", "update"]


def _everything(subjects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"subjects": subjects, "resourceRules": _EVERYTHING, "nonResourceRules": _ALL_URLS}]


def _limited(shares: int, lendable: int, queuing: tuple[int, int, int] | None) -> dict[str, Any]:
    if queuing is None:
        response: dict[str, Any] = {"type": "Reject"}
    else:
        queues, hand, length = queuing
        response = {"type": "Queue", "queuing": {"queues": queues, "handSize": hand, "queueLengthLimit": length}}
    return {"type": "Limited", "limited": {"nominalConcurrencyShares": shares, "limitResponse": response,
                                           "lendablePercent": lendable}}


# name → spec. Mandatory first; order is upstream's.
MANDATORY_LEVELS: dict[str, dict[str, Any]] = {
    "exempt": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
    "catch-all": _limited(5, 0, None),
}
SUGGESTED_LEVELS: dict[str, dict[str, Any]] = {
    "system": _limited(30, 33, (64, 6, 50)),
    "node-high": _limited(40, 25, (64, 6, 50)),
    "leader-election": _limited(10, 0, (16, 4, 50)),
    "workload-high": _limited(40, 50, (128, 6, 50)),
    "workload-low": _limited(100, 90, (128, 6, 50)),
    "global-default": _limited(20, 50, (128, 6, 50)),
}


def _schema(level: str, precedence: int, distinguisher: str | None, rules: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence}
    if distinguisher:
        spec["distinguisherMethod"] = {"type": distinguisher}
    spec["rules"] = rules
    return spec


_KUBE_SYSTEM_SAS = [_service_account("kube-system", "*")]
MANDATORY_SCHEMAS: dict[str, dict[str, Any]] = {
    "exempt": _schema("exempt", 1, None, _everything(_groups(MASTERS))),
    "catch-all": _schema("catch-all", 10000, "ByUser", _everything(_groups(UNAUTHENTICATED, AUTHENTICATED))),
}
SUGGESTED_SCHEMAS: dict[str, dict[str, Any]] = {
    "system-nodes": _schema("system", 500, "ByUser", _everything(_groups(NODES))),
    "system-node-high": _schema("node-high", 400, "ByUser", [{
        "subjects": _groups(NODES),
        "resourceRules": [_resources(["*"], [""], ["nodes", "nodes/status"], cluster=True, namespaces=["*"]),
                          _resources(["*"], ["coordination.k8s.io"], ["leases"], cluster=False, namespaces=["*"])]}]),
    "probes": _schema("exempt", 2, None, [{
        "subjects": _groups(UNAUTHENTICATED, AUTHENTICATED),
        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}]),
    "system-leader-election": _schema("leader-election", 100, "ByUser", [{
        "subjects": _users(KCM, SCHEDULER) + _KUBE_SYSTEM_SAS,
        "resourceRules": [_resources(_ELECTION, ["coordination.k8s.io"], ["leases"], cluster=False,
                                     namespaces=["*"])]}]),
    "endpoint-controller": _schema("workload-high", 150, "ByUser", [{
        "subjects": _users(KCM) + [_service_account("kube-system", "endpoint-controller")],
        "resourceRules": [_resources(_ELECTION, [""], ["endpoints"], cluster=False, namespaces=["*"])]}]),
    "workload-leader-election": _schema("leader-election", 200, "ByUser", [{
        "subjects": _KUBE_SYSTEM_SAS,
        "resourceRules": [_resources(_ELECTION, ["coordination.k8s.io"], ["leases"], cluster=False,
                                     namespaces=["*"])]}]),
    "kube-controller-manager": _schema("workload-high", 800, "ByNamespace", _everything(_users(KCM))),
    "kube-scheduler": _schema("workload-high", 800, "ByNamespace", _everything(_users(SCHEDULER))),
    "kube-system-service-accounts": _schema("workload-high", 900, "ByNamespace", _everything(_KUBE_SYSTEM_SAS)),
    "service-accounts": _schema("workload-low", 9000, "ByUser", _everything(_groups(SERVICE_ACCOUNTS))),
    "global-default": _schema("global-default", 9900, "ByUser", _everything(_groups(UNAUTHENTICATED, AUTHENTICATED))),
}
