"""What one check sees: `Context` (its namespace, an `Api`, cleanup, polling) and `Skip`.

`Api` is a `client.rest.RestClient` that keeps the last exchanges (request and response or error)
so a failure report can show the call that broke, plus a few conveniences checks use everywhere:
resources looked up by apiVersion and kind (through discovery, once per run), objects created in
the check's namespace by default, and cluster-scoped objects labelled `LABEL` and deleted again
when the check ends.
The runner builds one `Context` per check and closes it; checks never build their own.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, NoReturn, TypeVar

from client import errors, retrying
from client.discovery import Discovered
from client.kubeconfig import Config
from client.resources import Resource
from client.rest import JSON, Query, RestClient

T = TypeVar("T")
Obj = dict[str, Any]
# On every namespace the runner makes and every cluster-scoped object `Context.create` makes, so
# `runner.sweep` finds what an interrupted run left.
LABEL = "conformance.haru.dev/check"
KEEP_EXCHANGES = 20  # the last calls a failure report shows
_BODY_LIMIT = 4000  # characters of a body kept per exchange
_names = itertools.count(1)


class Skip(Exception):
    """Raised by `Context.skip`: the check does not apply to this cluster; the reason goes in the report."""


@dataclass
class Exchange:
    method: str
    path: str
    query: list[tuple[str, str]]
    request_body: str
    status: int  # 0: the connection failed
    response_body: str
    seconds: float

    def render(self) -> str:
        query = "&".join(f"{k}={v}" for k, v in self.query)
        line = f"{self.method} {self.path}{'?' + query if query else ''} → {self.status or 'no response'} ({self.seconds * 1000:.0f} ms)"
        parts = [line]
        if self.request_body:
            parts.append(f"  request:  {self.request_body}")
        if self.response_body:
            parts.append(f"  response: {self.response_body}")
        return "\n".join(parts)


def _text(value: Any) -> str:
    if value is None:
        return ""
    text = value.decode(errors="replace") if isinstance(value, bytes) else repr(value) if not isinstance(value, str) else value
    return text if len(text) <= _BODY_LIMIT else text[:_BODY_LIMIT] + f"… ({len(text)} characters)"


@dataclass(frozen=True)
class _ClientGoRetry(retrying.Retry):
    """client-go's rule, which upstream's e2e tests see: a 429 is retried only when the server sent
    Retry-After. Without it (an eviction a PodDisruptionBudget refuses) the check sees the 429."""

    def delay(self, attempt: int, method: str, *, status: int | None = None, retry_after: str | None = None,
              transport_error: bool = False) -> float | None:
        if status == 429 and retry_after is None:
            return None
        return super().delay(attempt, method, status=status, retry_after=retry_after, transport_error=transport_error)


class Api(RestClient):
    """A RestClient that remembers its last exchanges and knows the cluster's resources."""

    def __init__(self, config: Config, discovered: Discovered, *, user_agent: str = "haru-conformance/1.36") -> None:
        super().__init__(config, user_agent=user_agent, retry=_ClientGoRetry())
        self.discovered = discovered
        self.exchanges: deque[Exchange] = deque(maxlen=KEEP_EXCHANGES)
        self.cleanups: list[Callable[[], Awaitable[Any]]] = []

    async def request(self, method: str, path: str, *, query: Query = (), body: Any = None,
                      content_type: str = JSON, accept: str = JSON) -> Any:
        query = list(query)
        started = time.monotonic()
        try:
            answer = await super().request(method, path, query=query, body=body, content_type=content_type,
                                           accept=accept)
        except errors.APIError as err:
            self._record(method, path, query, body, err.code, err.status or err.message, started)
            raise
        except BaseException as err:
            self._record(method, path, query, body, 0, f"{type(err).__name__}: {err}", started)
            raise
        self._record(method, path, query, body, 200, answer, started)
        return answer

    def _record(self, method: str, path: str, query: list[tuple[str, str]], body: Any, status: int,
                answer: Any, started: float) -> None:
        self.exchanges.append(Exchange(method, path, query, _text(body), status, _text(answer),
                                       time.monotonic() - started))

    def resource(self, api_version: str, kind: str) -> Resource:
        """The served resource for a kind; LookupError (a failure) if the cluster does not serve it."""
        found = self.discovered.for_kind(api_version, kind)
        if found is None:
            raise LookupError(f"the cluster does not serve {kind} in {api_version}")
        return found

    def serves(self, api_version: str, kind: str) -> bool:
        return self.discovered.for_kind(api_version, kind) is not None


class Context:
    """One check's world. `namespace` exists when the check starts and is deleted after it."""

    def __init__(self, api: Api, namespace: str, gates: dict[str, bool]) -> None:
        self.api = api
        self.namespace = namespace
        self.gates = gates  # what the cluster reports; a gate missing here is unknown

    def skip(self, reason: str) -> NoReturn:
        raise Skip(reason)

    def name(self, prefix: str) -> str:
        """A fresh DNS-1123 name for an object of this check."""
        return f"{prefix}-{next(_names)}"

    def defer(self, cleanup: Callable[[], Awaitable[Any]]) -> None:
        """Run `cleanup` when the check ends, pass or fail (last registered, first run)."""
        self.api.cleanups.append(cleanup)

    # Objects by their own apiVersion and kind. Namespaced objects land in `self.namespace` unless
    # they name another; cluster-scoped ones are deleted again when the check ends.

    async def create(self, obj: Obj, namespace: str | None = None) -> Obj:
        resource = self.api.resource(obj["apiVersion"], obj["kind"])
        if resource.namespaced:
            ns = namespace or (obj.get("metadata") or {}).get("namespace") or self.namespace
            return await self.api.create(resource, obj, ns)
        metadata = obj.get("metadata") or {}
        obj = {**obj, "metadata": {**metadata, "labels": {**(metadata.get("labels") or {}), LABEL: "true"}}}
        created = await self.api.create(resource, obj)
        self.defer(lambda: self._delete_quietly(resource, created["metadata"]["name"]))
        return created

    async def get(self, api_version: str, kind: str, name: str, namespace: str | None = None,
                  subresource: str | None = None) -> Obj:
        resource = self.api.resource(api_version, kind)
        return await self.api.get(resource, name, self._ns(resource, namespace), subresource)

    async def list(self, api_version: str, kind: str, namespace: str | None = None, **options: Any) -> Obj:
        resource = self.api.resource(api_version, kind)
        return await self.api.list(resource, self._ns(resource, namespace), **options)

    async def patch(self, api_version: str, kind: str, name: str, patch: Any, namespace: str | None = None,
                    **options: Any) -> Obj:
        resource = self.api.resource(api_version, kind)
        return await self.api.patch(resource, name, patch, self._ns(resource, namespace), **options)

    async def update(self, obj: Obj, subresource: str | None = None) -> Obj:
        resource = self.api.resource(obj["apiVersion"], obj["kind"])
        ns = (obj.get("metadata") or {}).get("namespace") or self.namespace
        return await self.api.update(resource, obj, self._ns(resource, ns), subresource)

    async def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None,
                     **options: Any) -> Obj:
        resource = self.api.resource(api_version, kind)
        return await self.api.delete(resource, name, self._ns(resource, namespace), **options)

    def _ns(self, resource: Resource, namespace: str | None) -> str | None:
        return (namespace or self.namespace) if resource.namespaced else None

    async def _delete_quietly(self, resource: Resource, name: str) -> None:
        try:
            await self.api.delete(resource, name)
        except errors.APIError as err:
            if not errors.is_not_found(err):
                raise

    async def eventually(self, probe: Callable[[], Awaitable[T]], *, timeout: float = 30.0,
                         interval: float = 0.1, what: str = "") -> T:
        """Call `probe` until it returns something truthy, and return that; fail after `timeout` s.

        An AssertionError or APIError from the probe counts as "not yet"; the last one is in the
        failure message, so the report says what was still wrong.
        """
        deadline = time.monotonic() + timeout
        last: BaseException | None = None
        while True:
            try:
                value = await probe()
                if value:
                    return value
                last = None
            except (AssertionError, errors.APIError) as err:
                last = err
            if time.monotonic() >= deadline:
                detail = f": {last}" if last else ""
                raise AssertionError(f"timed out after {timeout:g}s waiting for {what or 'a condition'}{detail}")
            await asyncio.sleep(interval)
