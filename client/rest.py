"""`RestClient`: one async method per API verb, over one aiohttp session, JSON in and out.

GET, LIST, WATCH (an async iterator of events), CREATE, UPDATE (PUT), PATCH (merge, JSON,
strategic, apply), DELETE and DeleteCollection, plus `get_path` for discovery documents. Any
non-2xx answer, and an ERROR event inside a watch, raises `errors.APIError` carrying the Status.
Requests are retried as `retrying.Retry` says (429 and Retry-After, lost connections on reads).
Used by `listwatch.ListWatch`, `discovery.Discovery` and directly by controllers; the connection
settings come from `kubeconfig.Config`, or the bearer token per request from a `token_source`.
"""

from __future__ import annotations

from typing import Any, AsyncGenerator, AsyncIterator, Iterable

import asyncio

import aiohttp
import msgspec

from client import errors, retrying
from client.kubeconfig import Config
from client.resources import Resource
from client.token_source import TokenSource

JSON = "application/json"
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
METADATA_OBJECT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
Query = Iterable[tuple[str, str]]
# Requests (not watches) in flight at once per client. A burst (a ReplicaSet's slow-start batch of
# 256, the garbage collector's workers) otherwise opens one TLS connection per request, paying a
# handshake on both sides for each; client-go multiplexes such bursts over one HTTP/2 connection.
MAX_IN_FLIGHT = 64


def _query(**params: Any) -> list[tuple[str, str]]:
    """Query pairs in wire spelling, leaving out what is unset (kube treats "" as unset too)."""
    out = []
    for key, value in params.items():
        if value is None or value == "" or value is False:
            continue
        out.append((key, "true" if value is True else str(value)))
    return out


class RestClient:
    def __init__(self, config: Config, *, user_agent: str = "haru-client/0.1", timeout: float = 30.0,
                 retry: retrying.Retry = retrying.Retry(), token_source: TokenSource | None = None) -> None:
        self.config = config
        # A bearer token that changes (a controller's service-account token): asked per request.
        self.token_source = token_source
        self.user_agent = user_agent
        self.timeout = timeout
        self.retry = retry
        self._session: aiohttp.ClientSession | None = None
        self._in_flight: asyncio.Semaphore | None = None
        self._request_timeout: aiohttp.ClientTimeout | None = None  # one per client, not per request

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # No connection cap: every informer holds one connection open for its watch.
            connector = aiohttp.TCPConnector(limit=0, ssl=self.config.ssl_context())
            headers = {"User-Agent": self.user_agent, **self.config.headers()}
            self._session = aiohttp.ClientSession(connector=connector, headers=headers)
            self._in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)  # bound to this session's loop
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> "RestClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def request(self, method: str, path: str, *, query: Query = (), body: Any = None,
                      content_type: str = JSON, accept: str = JSON) -> Any:
        headers = {"Accept": accept}
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else msgspec.json.encode(body)
            headers["Content-Type"] = content_type
        timeout = self._request_timeout
        if timeout is None or timeout.total != self.timeout:
            timeout = self._request_timeout = aiohttp.ClientTimeout(total=self.timeout)
        params = list(query) or None  # aiohttp skips its query handling for None, not for []
        attempt = 0
        while True:
            try:
                session = self.session
                assert self._in_flight is not None
                await self._authorize(headers)
                async with self._in_flight, session.request(method, self.config.server + path, params=params,
                                                            data=data, headers=headers, timeout=timeout) as resp:
                    raw = await resp.read()
                    self._answered(resp.status)
                    if resp.status < 300:
                        if accept.startswith("text/"):  # /metrics, logs: the body as text
                            return raw.decode(errors="replace")
                        return msgspec.json.decode(raw) if raw else None
                    delay = self.retry.delay(attempt, method, status=resp.status,
                                             retry_after=resp.headers.get("Retry-After"))
                    if delay is None:
                        raise errors.APIError.from_status(resp.status, _decode_or_text(raw))
            except retrying.TRANSPORT_ERRORS:
                delay = self.retry.delay(attempt, method, transport_error=True)
                if delay is None:
                    raise
            attempt += 1
            await asyncio.sleep(delay)

    async def _authorize(self, headers: dict[str, str]) -> None:
        if self.token_source is not None:
            headers["Authorization"] = f"Bearer {await self.token_source.token()}"

    def _answered(self, status: int) -> None:
        # client-go's ResettableTokenSourceWrapTransport: a 401 means the token is no good any more.
        if status == 401 and self.token_source is not None:
            self.token_source.reset()

    async def get_path(self, path: str) -> Any:
        return await self.request("GET", path)

    async def get(self, resource: Resource, name: str, namespace: str | None = None,
                  subresource: str | None = None) -> dict[str, Any]:
        return _object(await self.request("GET", resource.path(namespace, name, subresource)))

    async def list(self, resource: Resource, namespace: str | None = None, *, label_selector: str = "",
                   field_selector: str = "", shard_selector: str = "", limit: int = 0,
                   continue_token: str = "", resource_version: str = "", resource_version_match: str = "",
                   metadata_only: bool = False) -> dict[str, Any]:
        query = _query(labelSelector=label_selector, fieldSelector=field_selector, shardSelector=shard_selector,
                       limit=limit or None, resourceVersion=resource_version,
                       resourceVersionMatch=resource_version_match, **{"continue": continue_token})
        return _object(await self.request("GET", resource.path(namespace), query=query,
                                  accept=METADATA_LIST if metadata_only else JSON))

    async def watch(self, resource: Resource, namespace: str | None = None, *, resource_version: str = "",
                    label_selector: str = "", field_selector: str = "", shard_selector: str = "",
                    send_initial_events: bool = False, allow_bookmarks: bool = True,
                    timeout_seconds: int | None = None, metadata_only: bool = False) -> AsyncGenerator[dict[str, Any], None]:
        """Events as `{"type", "object"}` dicts until the server ends the stream; ERROR raises.

        An async generator: close it (`contextlib.aclosing`) to drop the connection early.
        """
        query = _query(watch=True, resourceVersion=resource_version, labelSelector=label_selector,
                       fieldSelector=field_selector, shardSelector=shard_selector,
                       allowWatchBookmarks=allow_bookmarks or send_initial_events,
                       sendInitialEvents=send_initial_events,
                       resourceVersionMatch="NotOlderThan" if send_initial_events else "",
                       timeoutSeconds=timeout_seconds)
        # No read timeout: a quiet watch is healthy; the server ends it after timeoutSeconds.
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.timeout)
        headers = {"Accept": METADATA_OBJECT if metadata_only else JSON}
        await self._authorize(headers)
        async with self.session.get(self.config.server + resource.path(namespace), params=query,
                                    headers=headers, timeout=timeout) as resp:
            self._answered(resp.status)
            if resp.status >= 300:
                raise errors.APIError.from_status(resp.status, _decode_or_text(await resp.read()))
            async for event in _events(resp.content):
                yield event

    async def create(self, resource: Resource, obj: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
        ns = namespace or (obj.get("metadata") or {}).get("namespace")
        return _object(await self.request("POST", resource.path(ns), body=obj))

    async def update(self, resource: Resource, obj: dict[str, Any], namespace: str | None = None,
                     subresource: str | None = None) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        ns = namespace or meta.get("namespace")
        return _object(await self.request("PUT", resource.path(ns, meta["name"], subresource), body=obj))

    async def patch(self, resource: Resource, name: str, patch: Any, namespace: str | None = None, *,
                    patch_type: str = "merge", subresource: str | None = None, field_manager: str = "",
                    force: bool = False) -> dict[str, Any]:
        query = _query(fieldManager=field_manager, force=force)
        return _object(await self.request("PATCH", resource.path(namespace, name, subresource), query=query, body=patch,
                                  content_type=PATCH_TYPES[patch_type]))

    async def delete(self, resource: Resource, name: str, namespace: str | None = None, *,
                     propagation_policy: str | None = None, uid: str | None = None,
                     resource_version: str | None = None, grace_period_seconds: int | None = None) -> dict[str, Any]:
        return _object(await self.request("DELETE", resource.path(namespace, name),
                                  body=_delete_options(propagation_policy, uid, resource_version, grace_period_seconds)))

    async def delete_collection(self, resource: Resource, namespace: str | None = None, *, label_selector: str = "",
                                field_selector: str = "", propagation_policy: str | None = None) -> dict[str, Any]:
        query = _query(labelSelector=label_selector, fieldSelector=field_selector)
        return _object(await self.request("DELETE", resource.path(namespace), query=query,
                                  body=_delete_options(propagation_policy, None, None, None)))


def _delete_options(policy: str | None, uid: str | None, rv: str | None, grace: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if policy:
        body["propagationPolicy"] = policy
    if grace is not None:
        body["gracePeriodSeconds"] = grace
    preconditions = {k: v for k, v in (("uid", uid), ("resourceVersion", rv)) if v}
    if preconditions:
        body["preconditions"] = preconditions
    return body


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise errors.APIError(500, "", f"expected a JSON object from the server, got {type(value).__name__}")
    return value


def _decode_or_text(raw: bytes) -> Any:
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return raw.decode(errors="replace")


async def _events(content: aiohttp.StreamReader) -> AsyncIterator[dict[str, Any]]:
    # Split on newlines ourselves: StreamReader.readline refuses lines over 128 KiB, and one
    # event carries a whole object.
    buffer = bytearray()
    async for chunk in content.iter_any():
        buffer += chunk
        while (end := buffer.find(b"\n")) >= 0:
            line = bytes(buffer[:end])
            del buffer[:end + 1]
            if line.strip():
                yield _event(line)
    if buffer.strip():
        yield _event(bytes(buffer))


def _event(line: bytes) -> dict[str, Any]:
    event = _object(msgspec.json.decode(line))
    if event.get("type") == "ERROR":
        raise errors.APIError.from_status(500, event.get("object"))
    return event

