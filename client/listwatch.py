"""`ListWatch`: one collection (resource, namespace, selectors) bound to a client, able to list
and to watch it — client-go's ListerWatcher.

`ListerWatcher` is the protocol the reflector drives; `ListWatch` implements it over
`rest.RestClient`, and `testing.FakeListWatch` implements it in memory. The shard selector is
passed through as `shardSelector=` (KEP-5866); `informer.Informer` also filters by it on the
client, for servers that ignore the parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, AsyncGenerator, Protocol

from client.resources import Resource
from client.rest import RestClient


class ListerWatcher(Protocol):
    resource: Resource

    async def list(self, *, resource_version: str = "", limit: int = 0,
                   continue_token: str = "") -> dict[str, Any]: ...

    def watch(self, *, resource_version: str = "", send_initial_events: bool = False,
              timeout_seconds: int | None = None) -> AsyncGenerator[dict[str, Any], None]: ...


@dataclass
class ListWatch:
    client: RestClient
    resource: Resource
    namespace: str | None = None
    label_selector: str = ""
    field_selector: str = ""
    shard_selector: str = ""
    metadata_only: bool = False

    async def list(self, *, resource_version: str = "", limit: int = 0, continue_token: str = "") -> dict[str, Any]:
        return await self.client.list(
            self.resource, self.namespace, label_selector=self.label_selector, field_selector=self.field_selector,
            shard_selector=self.shard_selector, limit=limit, continue_token=continue_token,
            resource_version=resource_version, metadata_only=self.metadata_only,
        )

    def watch(self, *, resource_version: str = "", send_initial_events: bool = False,
              timeout_seconds: int | None = None) -> AsyncGenerator[dict[str, Any], None]:
        return self.client.watch(
            self.resource, self.namespace, resource_version=resource_version, label_selector=self.label_selector,
            field_selector=self.field_selector, shard_selector=self.shard_selector,
            send_initial_events=send_initial_events, allow_bookmarks=True, timeout_seconds=timeout_seconds,
            metadata_only=self.metadata_only,
        )
