"""Seed upstream's default RBAC objects at server start, as kube-apiserver's rbac/bootstrap-roles hook does.

Every object carries `kubernetes.io/bootstrapping: rbac-defaults` and
`rbac.authorization.kubernetes.io/autoupdate: "true"`. Missing ones are created; an existing one
whose autoupdate annotation is still "true" gets back any default rules or subjects it lost
(upstream's reconcile adds, never removes); one set to "false" is left as the user made it.
admin, edit and view are stored with their aggregationRule and no rules: the ClusterRole
aggregation controller (controllers/cluster_role_aggregation.py) fills them, as upstream's
controller manager does. Called by `runner.start` before the server listens.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import msgspec

from apiserver import go_shape, writing
from apiserver.authorization import bootstrap_roles as data
from apiserver.context import Server
from storage import errors as storage_errors

log = logging.getLogger("haru.apiserver.rbac_bootstrap")
GROUP = "rbac.authorization.k8s.io"
API_VERSION = f"{GROUP}/v1"
BOOTSTRAPPING = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"


def _meta(name: str, namespace: str = "", labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta.update({"uid": str(uuid.uuid4()), "creationTimestamp": writing.now(),
                 "labels": {**BOOTSTRAPPING, **(labels or {})}, "annotations": {AUTOUPDATE: "true"}})
    return meta


def _subjects(entries: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    out = []
    for kind, name, namespace in entries:
        if kind == "ServiceAccount":
            out.append({"kind": kind, "name": name, "namespace": namespace})
        else:
            out.append({"kind": kind, "apiGroup": GROUP, "name": name})
    return out


def objects() -> list[tuple[str, dict[str, Any]]]:
    """(storage key, object) for every default role and binding."""
    out: list[tuple[str, dict[str, Any]]] = []
    for name, rules, labels, aggregate_from in data.CLUSTER_ROLES:
        role: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "ClusterRole", "metadata": _meta(name, labels=labels)}
        if aggregate_from:
            role["aggregationRule"] = {"clusterRoleSelectors": [
                {"matchLabels": {data.AGGREGATE + aggregate_from: "true"}}]}
        role["rules"] = [dict(r) for r in rules] if rules else None
        out.append((f"/registry/{GROUP}/clusterroles/{name}", role))
    for name, subjects in data.CLUSTER_ROLE_BINDINGS:
        out.append((f"/registry/{GROUP}/clusterrolebindings/{name}", _binding("ClusterRoleBinding", name, "", name,
                                                                              "ClusterRole", subjects)))
    for short, rules in data.CONTROLLER_ROLES:
        name = f"system:controller:{short}"
        out.append((f"/registry/{GROUP}/clusterroles/{name}", {
            "apiVersion": API_VERSION, "kind": "ClusterRole", "metadata": _meta(name), "rules": [dict(r) for r in rules]}))
        out.append((f"/registry/{GROUP}/clusterrolebindings/{name}", _binding(
            "ClusterRoleBinding", name, "", name, "ClusterRole", [("ServiceAccount", short, "kube-system")])))
    for namespace, roles in data.NAMESPACE_ROLES.items():
        for name, rules in roles:
            out.append((f"/registry/{GROUP}/roles/{namespace}/{name}", {
                "apiVersion": API_VERSION, "kind": "Role", "metadata": _meta(name, namespace),
                "rules": [dict(r) for r in rules]}))
    for namespace, bindings in data.NAMESPACE_ROLE_BINDINGS.items():
        for name, role_name, subjects in bindings:
            out.append((f"/registry/{GROUP}/rolebindings/{namespace}/{name}",
                        _binding("RoleBinding", name, namespace, role_name, "Role", subjects)))
    return out


def _binding(kind: str, name: str, namespace: str, role: str, role_kind: str,
             subjects: list[tuple[str, str, str]]) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": API_VERSION, "kind": kind, "metadata": _meta(name, namespace),
                           "roleRef": {"apiGroup": GROUP, "kind": role_kind, "name": role}}
    if subjects:
        obj["subjects"] = _subjects(subjects)
    return obj


def _reconciled(current: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any] | None:
    """The current object with the default rules or subjects it lacks added; None: nothing to add."""
    if (current.get("metadata", {}).get("annotations") or {}).get(AUTOUPDATE) != "true":
        return None
    changed = False
    if "roleRef" in wanted:
        have = current.get("subjects") or []
        for subject in wanted.get("subjects") or ():
            if subject not in have:
                have.append(subject)
                changed = True
        if changed:
            current["subjects"] = have
    elif not wanted.get("aggregationRule"):
        have = current.get("rules") or []
        for rule in wanted.get("rules") or ():
            if rule not in have:
                have.append(rule)
                changed = True
        if changed:
            current["rules"] = have
    return current if changed else None


async def ensure(server: Server) -> int:
    """Create or reconcile every default object; returns how many were written."""
    writes = [_ensure_one(server, key, obj) for key, obj in objects()]
    # Concurrent writes share durable commits (group commit): one fsync for the lot, not 127.
    return sum(await asyncio.gather(*writes))


async def _ensure_one(server: Server, key: str, obj: dict[str, Any]) -> int:
    record = server.store.get(key)
    if record is not None:
        if _reconciled(msgspec.json.decode(record.value), obj) is None:
            return 0
        await server.store.guaranteed_update(key, lambda current: _reconciled(current, obj) or current)
        return 1
    plan = go_shape.plan_for(obj["apiVersion"], obj["kind"])
    if plan is not None:  # stored as kube's encoder writes them, like every other write
        go_shape.shape(obj, plan, fill=True)
    try:
        await server.store.create(key, obj)
    except storage_errors.KeyExists:
        return 0
    return 1
