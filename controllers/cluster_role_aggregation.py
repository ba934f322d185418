"""The ClusterRole aggregation controller: a role with an aggregationRule holds its selected roles' rules.

Upstream's pkg/controller/clusterroleaggregation, run in the controller manager as there (the API
server stores admin, edit and view with only their aggregationRule; nothing at bootstrap needs
the rules sooner). Any ClusterRole change re-queues every aggregating role; a sync lists the roles
each selector matches (sorted by name, the role itself skipped), appends each rule not already
present, and when the result differs from the stored rules applies it with server-side apply as
field manager `clusterrole-aggregation-controller`, forced, exactly as upstream writes it.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from client import errors
from client.informer import Event
from client.resources import CLUSTERROLES
from client.rest import RestClient
from controllers import label_selectors
from controllers.reconciling import Result, Watch

FIELD_MANAGER = "clusterrole-aggregation-controller"


class ClusterRoleAggregationController:
    name = "clusterrole-aggregation"

    def __init__(self, client: RestClient) -> None:
        self.client = client
        self.roles = Watch(CLUSTERROLES, self._aggregating_keys)
        self.watches = [self.roles]
        self._ctx: Any = None

    async def prepare(self, ctx: Any) -> None:
        self._ctx = ctx

    def _cache(self) -> Any:
        informer = self._ctx.informer(self.roles) if self._ctx is not None else None
        return informer.store if informer is not None else None

    def _aggregating_keys(self, event: Event) -> list[Hashable]:
        """Any role's change may change what a selector picks: every aggregating role is looked at again."""
        store = self._cache()
        keys: list[Hashable] = []
        if store is not None:
            keys = [r["metadata"]["name"] for r in store.list() if r.get("aggregationRule")]
        if event.obj.get("aggregationRule") and event.key not in keys:
            keys.append(event.key)
        return keys

    async def reconcile(self, key: Hashable) -> Result | None:
        store = self._cache()
        role = store.get(str(key)) if store is not None else None
        if role is None or not role.get("aggregationRule"):
            return None
        rules = aggregated_rules(role, store.list())
        if rules == (role.get("rules") or []):
            return None
        body = {"apiVersion": CLUSTERROLES.api_version, "kind": "ClusterRole",
                "metadata": {"name": role["metadata"]["name"]}, "rules": rules}
        try:
            await self.client.patch(CLUSTERROLES, str(key), body, patch_type="apply",
                                    field_manager=FIELD_MANAGER, force=True)
        except errors.APIError as exc:
            if errors.is_not_found(exc):
                return None  # deleted meanwhile
            raise
        return None


def aggregated_rules(role: dict[str, Any], roles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rules `role`'s aggregationRule selects, in upstream's order, without repeats."""
    name = role["metadata"]["name"]
    out: list[dict[str, Any]] = []
    for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ():
        chosen = [r for r in roles if label_selectors.matches(selector, (r.get("metadata") or {}).get("labels"))]
        for other in sorted(chosen, key=lambda r: r["metadata"]["name"]):
            if other["metadata"]["name"] == name:
                continue
            for rule in other.get("rules") or ():
                if rule not in out:
                    out.append(rule)
    return out
