"""The API Priority and Fairness filter: classify, estimate, wait for seats, run, give them back.

Sits in the app's middleware chain after authentication and impersonation and before
authorization, where upstream's WithPriorityAndFairness sits. For each request:
  1. non-watch long-running requests (exec, attach, portforward, proxy, log) pass untouched, as
     upstream exempts them;
  2. the user, verb, group, resource[/subresource], namespace (or the path) pick the first matching
     FlowSchema (`config.classify`); the response carries `X-Kubernetes-PF-FlowSchema-UID` and
     `X-Kubernetes-PF-PriorityLevel-UID`, set in `on_response_prepare` so streams and errors get them;
  3. `estimate.py` says how many seats; the level (`queueset.py`) admits, queues or refuses;
  4. refused: 429 with `Retry-After`, the plain-text body upstream's http.Error writes ("Too many
     requests, please try again later."), which client-go turns into a TooManyRequests StatusError
     with details.retryAfterSeconds and retries;
  5. admitted: the handler runs holding the seats; a WATCH gives them back once initialized
     (`watch_initialized`, called by the watch handler after its initial events), everything else
     when the handler returns.
With `--enable-priority-and-fairness=false` nothing is installed and this filter is not in the chain.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any, Awaitable, Callable

from aiohttp import web

from apiserver.flowcontrol import config as config_module, estimate, matching, queueset

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})
MESSAGE = "Too many requests, please try again later.\n"
FLOW_SCHEMA_UID = "X-Kubernetes-PF-FlowSchema-UID"
PRIORITY_LEVEL_UID = "X-Kubernetes-PF-PriorityLevel-UID"
RETRY_AFTER = "1"  # seconds; upstream starts at 1 too

CLASSIFICATION_KEY: web.RequestKey[config_module.Classification] = web.RequestKey(
    "haru_pf_classification", config_module.Classification)
RELEASE_KEY: web.RequestKey[Callable[[], None]] = web.RequestKey("haru_pf_release", object)  # type: ignore[arg-type]


class FlowControl:
    """What the filter needs: the configuration in force, the estimator, the counters for /metrics."""

    def __init__(self, count: Callable[[str], int], cfg: config_module.Config | None = None) -> None:
        self.config = cfg or config_module.Config()
        self.estimator = estimate.Estimator(count)
        # (flow schema, priority level) → count; reason is the third key part for rejections.
        self.dispatched: dict[tuple[str, str], int] = defaultdict(int)
        self.rejected: dict[tuple[str, str, str], int] = defaultdict(int)
        self.executing: dict[tuple[str, str], int] = defaultdict(int)
        self.waiting: dict[tuple[str, str], int] = defaultdict(int)


def digest(user: Any, info: Any) -> matching.Request:
    """The classification input of a request (its `auth.User` and `requestinfo.RequestInfo`)."""
    if info.is_resource:
        resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        return matching.Request(user.name, tuple(user.groups), True, info.verb, info.group, resource, info.namespace)
    return matching.Request(user.name, tuple(user.groups), False, info.verb, path=info.path)


async def admit(fc: FlowControl, request: web.Request, user: Any, info: Any, prefix: str | None,
                handler: Handler) -> web.StreamResponse:
    """Run `handler` under the request's priority level (steps 2-5 above)."""
    if info.is_resource and info.subresource in LONG_RUNNING_SUBRESOURCES:
        return await handler(request)
    found = fc.config.classify(digest(user, info))
    if found is None:  # no schema at all matched (possible only with the mandatory ones gone)
        return await handler(request)
    request[CLASSIFICATION_KEY] = found
    level = found.level.state
    flow = (found.schema.name, found.level.name)
    seats = 1 if level.exempt else fc.estimator.seats(info.verb, prefix, request.query, level.limit)
    fc.waiting[flow] += 1
    try:
        ticket = await level.acquire(found.flow_hash, seats)
    except queueset.Rejected as refused:
        fc.rejected[(flow[0], flow[1], refused.reason)] += 1
        return too_many_requests()
    finally:
        fc.waiting[flow] -= 1
    if ticket.immediate and seats > 1:
        # One event loop runs every handler, and most run to the end without yielding: seats that
        # are given and taken back within one step never make anyone wait, and every LIST that
        # arrived in an iteration would run in that same iteration, ahead of a lease renewal
        # behind them. Holding the seats across one loop iteration first makes the limit real:
        # per iteration a level runs at most its seats' worth of wide requests; the rest queue.
        await asyncio.sleep(0)
    fc.dispatched[flow] += 1
    fc.executing[flow] += 1

    def release() -> None:
        if not ticket.released:
            fc.executing[flow] -= 1
            ticket.release()

    request[RELEASE_KEY] = release
    try:
        return await handler(request)
    finally:
        release()


def watch_initialized(request: web.Request) -> None:
    """A watch has sent its initial state: from here on it holds no seats (upstream's rule)."""
    release = request.get(RELEASE_KEY)
    if release is not None:
        release()


def too_many_requests() -> web.Response:
    return web.Response(status=429, text=MESSAGE, content_type="text/plain", charset="utf-8",
                        headers={"Retry-After": RETRY_AFTER, "X-Content-Type-Options": "nosniff"})


async def on_response_prepare(request: web.Request, response: web.StreamResponse) -> None:
    found = request.get(CLASSIFICATION_KEY)
    if found is not None:
        response.headers[FLOW_SCHEMA_UID] = found.schema.uid
        response.headers[PRIORITY_LEVEL_UID] = found.level.uid
