"""What a controller is: a `watches` list and `async def reconcile(key) -> Result`.

Each `Watch` names a collection and maps each informer event to the keys to reconcile.
`reconcile` returns `Result(requeue_after=...)` to look again later, raises `Terminal` for a
failure that retrying cannot fix (logged, not retried), and any other exception means "try again"
with a per-key exponential backoff. `manager.Manager` runs controllers; `namespace.py` and
`garbage_collector.py` are the examples.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from client import cache
from client.informer import Event, Informer
from client.resources import Resource
from client.rest import RestClient
from client.workqueue import WorkQueue


@dataclass(frozen=True)
class Result:
    requeue_after: float | None = None


class Terminal(Exception):
    """A failure retrying cannot fix; the key waits for its next event."""


KeysFor = Callable[[Event], Iterable[Hashable]]


@dataclass(frozen=True)
class Watch:
    resource: Resource
    keys: KeysFor
    namespace: str | None = None
    label_selector: str = ""
    field_selector: str = ""
    shard_selector: str = ""
    metadata_only: bool = False
    indexers: dict[str, cache.IndexFunc] = field(default_factory=dict, compare=False, hash=False)

    @property
    def collection(self) -> tuple[Resource, str | None, str, str, str, bool]:
        """What identifies the informer this watch shares with others asking for the same thing."""
        return (self.resource, self.namespace, self.label_selector, self.field_selector, self.shard_selector,
                self.metadata_only)


def by_name(event: Event) -> list[Hashable]:
    """The most common mapping: the object's own `namespace/name` key."""
    return [event.key]


class Controller(Protocol):
    name: str

    @property
    def watches(self) -> Sequence[Watch]: ...

    async def reconcile(self, key: Hashable) -> Result | None: ...


class Context(Protocol):
    """What a controller may use of the manager that runs it (`manager.ControllerContext` is it)."""

    client: RestClient
    queue: WorkQueue  # the controller's own

    def add_watch(self, watch: Watch) -> Informer: ...

    async def remove_watch(self, watch: Watch) -> None: ...

    def informer(self, watch: Watch) -> Informer | None: ...


class Prepares(Protocol):
    """Optional: runs once before `watches` is read (discover what to watch)."""

    async def prepare(self, ctx: Context) -> None: ...


class RunsInBackground(Protocol):
    """Optional: a loop that runs beside the workers (re-discovery, periodic checks)."""

    async def run(self, ctx: Context) -> None: ...
