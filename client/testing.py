"""`FakeListWatch`: an in-memory collection with revisions, an event log and compaction, for
testing reflectors, informers and controllers without a server (client-go's
FakeControllerSource).

Tests mutate it (`create`, `update`, `delete`), then steer the failure cases a real server
produces: `compact()` makes older resourceVersions answer 410 Expired, `expire_watches()` sends
that as an ERROR to open streams, `end_watches()` ends them cleanly (the server's timeout), and
`watch_list=False` answers WatchList requests with 422 as a server without the feature does.
Every call is recorded in `calls` so tests can assert what a reflector asked for.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from typing import Any, AsyncGenerator

from client import cache
from client.errors import APIError
from client.reflector import INITIAL_EVENTS_END
from client.resources import Resource

Obj = dict[str, Any]
CONFIGMAPS = Resource("", "v1", "configmaps", "ConfigMap", verbs=frozenset({"list", "watch"}))
_END = "END"


def _expired(message: str) -> APIError:
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": message, "reason": "Expired", "code": 410}
    return APIError(410, "Expired", message, status)


class FakeListWatch:
    def __init__(self, resource: Resource = CONFIGMAPS, *, watch_list: bool = True, shard_selector: str = "") -> None:
        self.resource = resource
        self.shard_selector = shard_selector
        self.watch_list = watch_list
        self.revision = 0
        self.compacted = 0
        self.objects: dict[str, Obj] = {}
        self.log: list[tuple[int, str, Obj]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.watch_errors: list[APIError] = []  # raised by the next watch calls, in order
        self._watchers: set[asyncio.Queue[Any]] = set()

    # -- mutations ---------------------------------------------------------------------------

    def _record(self, kind: str, obj: Obj) -> Obj:
        self.revision += 1
        obj["metadata"]["resourceVersion"] = str(self.revision)
        snapshot = copy.deepcopy(obj)
        self.log.append((self.revision, kind, snapshot))
        for queue in self._watchers:
            queue.put_nowait((self.revision, kind, snapshot))
        return copy.deepcopy(snapshot)

    def create(self, obj: Obj) -> Obj:
        obj = copy.deepcopy(obj)
        obj.setdefault("kind", self.resource.kind)
        obj.setdefault("apiVersion", self.resource.api_version)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("uid", str(uuid.uuid4()))
        key = cache.key_of(obj)
        if key in self.objects:
            raise APIError(409, "AlreadyExists", f"{key} already exists")
        self.objects[key] = obj
        return self._record("ADDED", obj)

    def update(self, obj: Obj) -> Obj:
        key = cache.key_of(obj)
        if key not in self.objects:
            raise APIError(404, "NotFound", f"{key} not found")
        obj = copy.deepcopy(obj)
        obj["metadata"]["uid"] = self.objects[key]["metadata"]["uid"]
        self.objects[key] = obj
        return self._record("MODIFIED", obj)

    def delete(self, name: str, namespace: str | None = None) -> Obj:
        key = f"{namespace}/{name}" if namespace else name
        obj = self.objects.pop(key)
        return self._record("DELETED", obj)

    # -- failure steering --------------------------------------------------------------------

    def compact(self) -> None:
        """Forget the event log up to now: watches from an older resourceVersion get 410."""
        self.compacted = self.revision
        self.log = [entry for entry in self.log if entry[0] > self.compacted]

    def expire_watches(self) -> None:
        for queue in self._watchers:
            queue.put_nowait(_expired("too old resource version"))

    def end_watches(self) -> None:
        for queue in self._watchers:
            queue.put_nowait(_END)

    @property
    def open_watches(self) -> int:
        return len(self._watchers)

    # -- ListerWatcher -----------------------------------------------------------------------

    async def list(self, *, resource_version: str = "", limit: int = 0, continue_token: str = "") -> Obj:
        self.calls.append(("list", {"resource_version": resource_version, "limit": limit, "continue": continue_token}))
        if continue_token:
            at, offset = (int(part) for part in continue_token.split(":"))
            if at < self.compacted:
                raise _expired("The provided continue parameter is too old")
        else:
            at, offset = self.revision, 0
        # Past pages are read from the current state; tests that need snapshots compact instead.
        items = [copy.deepcopy(self.objects[k]) for k in sorted(self.objects)]
        page = items[offset:offset + limit] if limit else items[offset:]
        meta: dict[str, Any] = {"resourceVersion": str(at)}
        if limit and offset + limit < len(items):
            meta["continue"] = f"{at}:{offset + limit}"
        return {"kind": f"{self.resource.kind}List", "apiVersion": self.resource.api_version,
                "metadata": meta, "items": page}

    async def watch(self, *, resource_version: str = "", send_initial_events: bool = False,
                    timeout_seconds: int | None = None) -> AsyncGenerator[Obj, None]:
        self.calls.append(("watch", {"resource_version": resource_version,
                                     "send_initial_events": send_initial_events}))
        if send_initial_events and not self.watch_list:
            raise APIError(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: "
                           "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")
        if self.watch_errors:
            raise self.watch_errors.pop(0)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._watchers.add(queue)
        try:
            if send_initial_events or resource_version in ("", "0"):
                start = self.revision
                for key in sorted(self.objects):
                    yield {"type": "ADDED", "object": copy.deepcopy(self.objects[key])}
                if send_initial_events:
                    yield {"type": "BOOKMARK", "object": {
                        "kind": self.resource.kind, "apiVersion": self.resource.api_version,
                        "metadata": {"resourceVersion": str(start), "annotations": {INITIAL_EVENTS_END: "true"}}}}
            else:
                start = int(resource_version)
                if start < self.compacted:
                    raise _expired(f"too old resource version: {start} ({self.compacted})")
                for revision, kind, obj in list(self.log):
                    if revision > start:
                        start = revision
                        yield {"type": kind, "object": copy.deepcopy(obj)}
            while True:
                item = await queue.get()
                if item == _END:
                    return
                if isinstance(item, APIError):
                    raise item
                revision, kind, obj = item
                if revision > start:  # already replayed from the log
                    start = revision
                    yield {"type": kind, "object": copy.deepcopy(obj)}
        finally:
            self._watchers.discard(queue)
