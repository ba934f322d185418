"""`Discovery`: which resources the server serves, from aggregated discovery when the server has it.

`/api` and `/apis` asked for `apidiscovery.k8s.io/v2` APIGroupDiscoveryList, as client-go 1.36
does: two requests carry every group's preferred version (the first listed) and its resources.
A server that answers with legacy documents is read the old way: `/api/v1` and
`/apis/<group>/<preferred version>` in parallel. Every top-level resource becomes a `Resource`
with its kind, scope and verbs (subresources are left out). A group version that fails to answer
(or is Stale) is reported in `Discovered.failed` rather than failing the whole read, as
client-go's ErrGroupDiscoveryFailed does. Used by the namespace controller
(what to delete in a namespace) and the garbage collector (what to watch, and kind → resource).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from client.resources import Resource
from client.rest import JSON, RestClient

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," + JSON


@dataclass
class Discovered:
    resources: list[Resource]
    failed: dict[str, str] = field(default_factory=dict)  # group version → what went wrong

    def __post_init__(self) -> None:
        self._by_group_kind = {(r.group, r.kind): r for r in self.resources}

    def for_kind(self, api_version: str, kind: str) -> Resource | None:
        """The served resource for an apiVersion/kind (as in an ownerReference), any version of its group."""
        group = api_version.rpartition("/")[0]
        return self._by_group_kind.get((group, kind))

    def namespaced(self, *verbs: str) -> list[Resource]:
        return [r for r in self.resources if r.namespaced and r.supports(*verbs)]


def _resources(group: str, version: str, doc: dict[str, Any]) -> list[Resource]:
    found = []
    for entry in doc.get("resources") or []:
        name = entry.get("name") or ""
        if not name or "/" in name:
            continue
        found.append(Resource(group, version, name, entry.get("kind") or "", bool(entry.get("namespaced")),
                              frozenset(entry.get("verbs") or ())))
    return found


class Discovery:
    def __init__(self, client: RestClient) -> None:
        self.client = client

    async def preferred(self) -> Discovered:
        core, groups = await asyncio.gather(self.client.request("GET", "/api", accept=AGGREGATED),
                                            self.client.request("GET", "/apis", accept=AGGREGATED))
        if core.get("kind") == "APIGroupDiscoveryList" and groups.get("kind") == "APIGroupDiscoveryList":
            return _from_aggregated([*(core.get("items") or []), *(groups.get("items") or [])])
        targets: list[tuple[str, str, str]] = [("", v, f"/api/{v}") for v in (core.get("versions") or [])[:1]]
        for group in groups.get("groups") or []:
            preferred = group.get("preferredVersion") or (group.get("versions") or [{}])[0]
            if preferred.get("version"):
                targets.append((group["name"], preferred["version"], f"/apis/{preferred['groupVersion']}"))
        answers = await asyncio.gather(*(self.client.get_path(path) for _, _, path in targets), return_exceptions=True)
        resources: list[Resource] = []
        failed: dict[str, str] = {}
        for (group, version, _), answer in zip(targets, answers):
            group_version = f"{group}/{version}" if group else version
            if isinstance(answer, BaseException):
                if isinstance(answer, asyncio.CancelledError):
                    raise answer
                failed[group_version] = str(answer) or type(answer).__name__
                continue
            resources.extend(_resources(group, version, answer))
        return Discovered(resources, failed)


def _from_aggregated(groups: list[dict[str, Any]]) -> Discovered:
    """Each group's first (preferred) version, as ServerPreferredResources reads it."""
    resources: list[Resource] = []
    failed: dict[str, str] = {}
    for entry in groups:
        group = (entry.get("metadata") or {}).get("name") or ""
        versions = entry.get("versions") or []
        if not versions:
            continue
        preferred = versions[0]
        version = preferred.get("version") or ""
        if preferred.get("freshness") == "Stale":
            failed[f"{group}/{version}" if group else version] = "stale GroupVersion discovery"
            continue
        for item in preferred.get("resources") or []:
            kind = (item.get("responseKind") or {}).get("kind") or ""
            resources.append(Resource(group, version, item.get("resource") or "", kind,
                                      item.get("scope") == "Namespaced", frozenset(item.get("verbs") or ())))
    return Discovered(resources, failed)
