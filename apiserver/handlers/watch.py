"""WATCH: a chunked stream of newline-delimited events, from a resourceVersion or with initial events.

Start rules (kube's): resourceVersion unset or "0" → synthetic ADDED for what exists now, then
changes; N → changes after N (410 Expired as an ERROR event when N was compacted);
`sendInitialEvents=true` (WatchList) → ADDED for the state at least as new as N, then a BOOKMARK
annotated `k8s.io/initial-events-end: "true"`, then changes. Selectors apply to every event, and an
object that stops or starts matching becomes DELETED or ADDED. Bookmarks carry the store revision.
Events come from `store.watch`; a stored object's bytes are framed without decoding unless a
selector or a Table needs to look inside. A client that closes its watch ends it quietly.

A client too slow to keep up is cut, as upstream's cacher cuts a watcher whose buffer stays full
past its dispatch budget: here the buffer is the connection's (the transport's high-water mark and
the socket), and a write that cannot drain within `STALL_BUDGET` seconds ends the watch. The stream
is closed cleanly if the client drains it within one more budget, else the connection is dropped;
either way the client re-watches from the last revision it saw (or re-lists). Only that stream
waits: watchers read the shared ring at their own pace (`storage/watch_hub.py`), so a stalled one
never holds up the commit path or the others.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Any

from aiohttp import web

from apiserver import conversion, errors, event_objects, listing, query_flags, responses, tables
from apiserver.context import Endpoint
from apiserver.flowcontrol import filter as flowcontrol
from storage import errors as storage_errors

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
BOOKMARK_INTERVAL = 60.0  # seconds between bookmarks on a quiet stream (kube: about a minute)
DISCONNECT_CHECK = 2.0  # seconds between checks that the client of a quiet stream is still there
WRITE_CHUNK = 64 * 1024  # bytes of frames written at a time (the transport's default high-water mark)
STALL_BUDGET = 5.0  # seconds a write may wait for a full connection to drain before the watch is cut

log = logging.getLogger("haru.apiserver.watch")


class _TooSlow(Exception):
    """The client did not drain its connection within the stall budget."""


def _invalid(field: str, message: str) -> errors.APIError:
    return errors.invalid("ListOptions", "meta.k8s.io", "", [errors.field_error("FieldValueForbidden", field, message)])


def _check_options(query: Any) -> tuple[bool | None, bool]:
    send_initial = query_flags.flag(query, "sendInitialEvents")
    bookmarks = query_flags.enabled(query, "allowWatchBookmarks")
    match = query.get("resourceVersionMatch", "")
    if send_initial is not None:
        if match != "NotOlderThan":
            raise _invalid("sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for watch unless "
                           "resourceVersionMatch is set to NotOlderThan")
        if send_initial and not bookmarks:
            raise _invalid("allowWatchBookmarks", "Forbidden: allowWatchBookmarks must be set to true when "
                           "sendInitialEvents is set to true")
    elif match:
        raise _invalid("resourceVersionMatch", "Forbidden: resourceVersionMatch is forbidden for watch unless "
                       "sendInitialEvents is provided")
    return send_initial, bookmarks


def _timeout(query: Any) -> float:
    raw = query.get("timeoutSeconds")
    if raw:
        try:
            return max(float(int(raw)), 0.0)
        except ValueError:
            raise errors.bad_request(f'invalid value for timeoutSeconds: "{raw}"') from None
    return 1800.0 * (1 + random.random())  # kube: minRequestTimeout × [1, 2)


class _Stream:
    """Writes events to one client, filtering by the selection and shaping Tables when asked."""

    def __init__(self, ep: Endpoint, response: web.StreamResponse, sel: listing.Selection,
                 wanted: responses.Wanted, transport: asyncio.Transport | None) -> None:
        self.ep = ep
        self.response = response
        self.transport = transport
        self.high_water = transport.get_write_buffer_limits()[1] if transport is not None else 0
        self.stall_budget: float = ep.server.extra.get("watch_stall_budget", STALL_BUDGET)
        self.sel = sel
        self.wanted = wanted
        self.decode = sel.needs_objects or wanted.form == "Table"
        # A `metadata.name=` term is decided by the event's key (its last segment; a name never
        # changes): events of other objects are dropped before their bytes are decoded. The root CA
        # publisher's watch of every namespace's kube-root-ca.crt decoded each ConfigMap written.
        self.name = sel.field.requires_exact_match("metadata.name")
        self.headers_sent = False

    def _object_bytes(self, value: bytes, obj: dict[str, Any] | None) -> bytes:
        value, obj = conversion.stored_bytes(self.ep, value), obj and conversion.stored_object(self.ep, obj)
        if self.wanted.form == "object":
            return value if obj is None else responses.encode(obj)
        if self.wanted.form == "Table":
            assert obj is not None
            table = tables.render(self.ep.resource.group, self.ep.resource.resource, [obj],
                                  include_object=self.wanted.include_object,
                                  list_meta={"resourceVersion": obj["metadata"].get("resourceVersion", "")})
            if self.headers_sent:
                table["columnDefinitions"] = []
            self.headers_sent = True
            return responses.encode(table)
        if obj is None:
            return responses.encode(responses.partial_metadata_of(value))
        return responses.encode(responses.partial_metadata(obj))

    def frame(self, kind: str, value: bytes, obj: dict[str, Any] | None = None) -> bytes:
        return b'{"type":"' + kind.encode() + b'","object":' + self._object_bytes(value, obj) + b"}\n"

    def event_frame(self, kind: str, key: str, value: bytes, prev: bytes | None, revision: int) -> bytes | None:
        if not self.decode:
            return self.frame(kind, value)
        if self.name is not None and key[key.rindex("/") + 1:] != self.name:
            return None
        # Tables and partial metadata are built from the object, converted in place: a private
        # copy. A plain watch only reads it to match, then sends the stored bytes as they are.
        private = self.wanted.form != "object"
        obj = responses.decode(value) if private else event_objects.shared(value)
        now_matches = self.sel.matches(obj)
        if kind == "MODIFIED" and prev is not None:
            was_matching = self.sel.matches(event_objects.shared(prev))
            if now_matches and not was_matching:
                kind = "ADDED"
            elif was_matching and not now_matches:
                # kube sends the last matching state, stamped with this event's revision.
                old = responses.decode(prev)
                old["metadata"]["resourceVersion"] = str(revision)
                return self.frame("DELETED", b"", old)
            elif not now_matches:
                return None
        elif not now_matches:
            return None
        return self.frame(kind, value, obj if private else None)

    def bookmark(self, revision: int, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(revision)}
        if initial_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        obj = {"kind": self.ep.resource.kind, "apiVersion": self.ep.resource.api_version, "metadata": meta}
        return b'{"type":"BOOKMARK","object":' + responses.encode(obj) + b"}\n"

    async def write(self, data: bytes) -> None:
        if not data:
            return
        transport = self.transport
        # Only a write that may fill the transport past its high-water mark can wait on the client:
        # the common case stays free of a timer.
        if transport is None or transport.get_write_buffer_size() + len(data) <= self.high_water:
            await self.response.write(data)
            return
        try:
            async with asyncio.timeout(self.stall_budget):
                await self.response.write(data)  # the bytes are queued at once; only the drain waits
        except TimeoutError:
            raise _TooSlow from None

    async def cut(self) -> None:
        """End a stream whose client fell behind: a clean end if it drains in time, else drop it."""
        try:
            async with asyncio.timeout(self.stall_budget):
                await self.response.write_eof()
        except TimeoutError:
            if self.transport is not None:
                self.transport.abort()


async def handle(ep: Endpoint, request: web.Request) -> web.StreamResponse:
    query = request.query
    send_initial, bookmarks = _check_options(query)
    sel = listing.selection(ep, query, for_watch=True)
    wanted = responses.wants(request)
    deadline = time.monotonic() + _timeout(query)
    rv = query.get("resourceVersion", "")
    store = ep.server.store

    initial = send_initial if send_initial is not None else rv in ("", "0")
    start = listing.parse_revision(rv) if rv not in ("", "0") else None
    if start is not None and start > store.revision:
        await listing.catch_up(ep, query)
    if start is not None and start > store.revision:
        raise listing.too_large(start, store.revision)

    response = web.StreamResponse(headers={"Content-Type": "application/json", "Cache-Control": "no-cache"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    stream = _Stream(ep, response, sel, wanted, request.transport)  # type: ignore[arg-type]

    try:
        if initial:
            initial_state = listing.Selection(sel.label, sel.field, 0, None, None, sel.shard)
            page = listing.collect(ep, initial_state, decode=stream.decode)
            objects = page.objects if page.objects is not None else [None] * len(page.records)
            chunk: list[bytes] = []
            for record, obj in zip(page.records, objects):
                chunk.append(stream.frame("ADDED", record.value, obj))
                if len(chunk) >= 256:
                    await stream.write(b"".join(chunk))
                    chunk = []
            await stream.write(b"".join(chunk))
            start = page.revision
            if send_initial:
                await stream.write(stream.bookmark(start, initial_end=True))
        assert start is not None
        try:
            watcher = store.watch(ep.prefix(), start)
        except storage_errors.TooOldResourceVersion as exc:
            err = errors.from_storage(exc, ep.resource.resource, ep.resource.group, "")
            await stream.write(b'{"type":"ERROR","object":' + responses.encode(err.status()) + b"}\n")
            return response
        flowcontrol.watch_initialized(request)  # APF holds a watch's seats only until here, as upstream
        try:
            await _pump(stream, watcher, deadline, bookmarks, ep, request)
        finally:
            watcher.close()
    except ConnectionResetError:
        return response  # the client closed its watch: a normal end, nothing to log or send
    except _TooSlow:
        log.info("Forcing %s watcher close due to unresponsiveness: %s", ep.resource.resource, request.remote)
        await stream.cut()
    except asyncio.CancelledError:
        raise
    except errors.APIError as err:
        await stream.write(b'{"type":"ERROR","object":' + responses.encode(err.status()) + b"}\n")
    return response


def _client_gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def _pump(stream: _Stream, watcher: Any, deadline: float, bookmarks: bool, ep: Endpoint,
                request: web.Request) -> None:
    interval = ep.server.extra.get("bookmark_interval", BOOKMARK_INTERVAL)
    next_bookmark = time.monotonic() + interval
    last_revision = 0
    while True:
        now = time.monotonic()
        wait = deadline - now
        if bookmarks:
            wait = min(wait, next_bookmark - now)
        if wait <= 0:
            if time.monotonic() >= deadline:
                return
            await stream.write(stream.bookmark(max(last_revision, ep.server.store.revision)))
            next_bookmark = time.monotonic() + interval
            continue
        try:
            # A quiet stream still looks up now and then: a client that hung up must not pin a watcher.
            # (next_batch's own timeout, not asyncio.wait_for: that costs a task and a timer per wake-up.)
            batch = await watcher.next_batch(timeout=min(wait, DISCONNECT_CHECK))
        except storage_errors.WatchClosed:
            return  # the client re-watches from the last revision it saw
        if not batch:
            if _client_gone(request):
                return
            continue
        frames = []
        size = 0
        shard = stream.sel.shard  # uid and namespace never change: an object never enters or leaves a shard
        for event in batch if shard is None else shard.select(batch):
            last_revision = event.revision
            frame = stream.event_frame(event.type, event.key, event.value, event.prev_value, event.revision)
            if frame:
                frames.append(frame)
                size += len(frame)
                if size >= WRITE_CHUNK:  # a stalled client holds one chunk, not a whole backlog
                    await stream.write(b"".join(frames))
                    frames, size = [], 0
        await stream.write(b"".join(frames))
