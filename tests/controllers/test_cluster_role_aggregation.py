"""The ClusterRole aggregation controller's rule union (controllers/cluster_role_aggregation.py)."""

from __future__ import annotations

from controllers.cluster_role_aggregation import aggregated_rules

LABEL = "rbac.authorization.k8s.io/aggregate-to-view"


def _role(name: str, rules: list[dict], labels: dict | None = None, aggregate: str | None = None) -> dict:
    role = {"metadata": {"name": name, "labels": labels or {}}, "rules": rules}
    if aggregate:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {aggregate: "true"}}]}
    return role


def test_selected_roles_contribute_in_name_order_without_repeats() -> None:
    pods = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
    maps = {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}
    view = _role("view", [], {}, LABEL)
    roles = [view, _role("zeta", [pods, maps], {LABEL: "true"}), _role("alpha", [pods], {LABEL: "true"}),
             _role("unlabelled", [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}])]
    assert aggregated_rules(view, roles) == [pods, maps]


def test_a_role_never_aggregates_itself() -> None:
    selfish = _role("selfish", [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}], {LABEL: "true"}, LABEL)
    assert aggregated_rules(selfish, [selfish]) == []
