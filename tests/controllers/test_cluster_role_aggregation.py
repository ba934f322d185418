"""The ClusterRole aggregation controller (controllers/cluster_role_aggregation.py): its rule union,
then against a real API server read with kubectl v1.36.3 — admin, edit and view filled from the
bootstrap roles, a new labelled role reaching all three through the chain and leaving with it."""

from __future__ import annotations

import json

import pytest

from client.resources import CLUSTERROLES
from controllers.cluster_role_aggregation import aggregated_rules
from tests.controllers.conftest import Cluster
from tests.controllers.polling import eventually

CONTROLLERS = ("clusterrole-aggregation",)

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


# -- against a real API server ---------------------------------------------------------------------


async def _rules_of(cluster: Cluster, name: str) -> list[dict]:
    code, out, _ = await cluster.kubectl("get", "clusterrole", name, "-o", "json")
    assert code == 0
    return json.loads(out).get("rules") or []


@pytest.mark.asyncio(loop_scope="module")
async def test_the_defaults_fill_and_a_new_labelled_role_reaches_view_edit_and_admin(cluster: Cluster) -> None:
    view = await eventually(lambda: _rules_of(cluster, "view"), timeout=20)
    assert {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]} in view
    widgets = {"verbs": ["get", "list", "watch"], "apiGroups": ["example.com"], "resources": ["widgets"]}
    await cluster.client.create(CLUSTERROLES, {"metadata": {"name": "widget-viewer", "labels": {LABEL: "true"}},
                                               "rules": [widgets]})

    async def everywhere() -> bool:
        return all([widgets in await _rules_of(cluster, name) for name in ("view", "edit", "admin")])

    assert await eventually(everywhere, timeout=20)
    await cluster.client.delete(CLUSTERROLES, "widget-viewer")

    async def gone() -> bool:
        return widgets not in await _rules_of(cluster, "admin")

    assert await eventually(gone, timeout=20)
    code, out, _ = await cluster.kubectl("get", "clusterrole", "view", "-o", "json", "--show-managed-fields")
    managers = [m["manager"] for m in json.loads(out)["metadata"]["managedFields"]]
    assert "clusterrole-aggregation-controller" in managers
