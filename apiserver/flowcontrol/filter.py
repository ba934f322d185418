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
from typing import Any, Awaitable, Callable

from aiohttp import web

from apiserver.flowcontrol import config as config_module, estimate, queueset

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})
MESSAGE = "Too many requests, please try again later.\n"
FLOW_SCHEMA_UID = "X-Kubernetes-PF-FlowSchema-UID"
PRIORITY_LEVEL_UID = "X-Kubernetes-PF-PriorityLevel-UID"
RETRY_AFTER = "1"  # seconds; upstream starts at 1 too

CLASSIFICATION_KEY: web.RequestKey[config_module.Classification] = web.RequestKey(
    "haru_pf_classification", config_module.Classification)
TICKET_KEY: web.RequestKey[queueset.Ticket] = web.RequestKey("haru_pf_ticket", queueset.Ticket)


class FlowControl:
    """What the filter needs: the configuration in force (with the per-flow counters /metrics
    reads) and the work estimator."""

    def __init__(self, count: Callable[[str], int], cfg: config_module.Config | None = None) -> None:
        self.config = cfg or config_module.Config()
        self.estimator = estimate.Estimator(count)


async def admit(fc: FlowControl, request: web.Request, user: Any, info: Any, prefix: str | None,
                handler: Handler) -> web.StreamResponse:
    """Run `handler` under the request's priority level (steps 2-5 above). The common case, a
    free seat, costs a cached lookup and a few counters: no coroutine, no allocation but the ticket."""
    if info.is_resource and info.subresource in LONG_RUNNING_SUBRESOURCES:
        return await handler(request)
    found = fc.config.classify(user, info)
    if found is None:  # no schema at all matched (possible only with the mandatory ones gone)
        return await handler(request)
    request[CLASSIFICATION_KEY] = found
    level = found.level.state
    stats = found.stats
    seats = 1 if level.exempt or prefix is None else fc.estimator.seats(info.verb, prefix, request.query, level.limit)
    ticket = level.try_acquire(seats)
    if ticket is None:
        stats.waiting += 1
        try:
            ticket = await level.acquire(found.flow_hash, seats)
        except queueset.Rejected as refused:
            stats.rejected[refused.reason] = stats.rejected.get(refused.reason, 0) + 1
            return too_many_requests()
        finally:
            stats.waiting -= 1
    elif seats > 1:
        # One event loop runs every handler, and most run to the end without yielding: seats that
        # are given and taken back within one step never make anyone wait, and every LIST that
        # arrived in an iteration would run in that same iteration, ahead of a lease renewal
        # behind them. Holding the seats across one loop iteration first makes the limit real:
        # per iteration a level runs at most its seats' worth of wide requests; the rest queue.
        await asyncio.sleep(0)
    stats.dispatched += 1
    ticket.stats = stats
    stats.executing += 1
    request[TICKET_KEY] = ticket
    try:
        return await handler(request)
    finally:
        ticket.release()


def watch_initialized(request: web.Request) -> None:
    """A watch has sent its initial state: from here on it holds no seats (upstream's rule)."""
    ticket = request.get(TICKET_KEY)
    if ticket is not None:
        ticket.release()


def too_many_requests() -> web.Response:
    return web.Response(status=429, text=MESSAGE, content_type="text/plain", charset="utf-8",
                        headers={"Retry-After": RETRY_AFTER, "X-Content-Type-Options": "nosniff"})


async def on_response_prepare(request: web.Request, response: web.StreamResponse) -> None:
    found = request.get(CLASSIFICATION_KEY)
    if found is not None:
        response.headers[FLOW_SCHEMA_UID] = found.schema.uid
        response.headers[PRIORITY_LEVEL_UID] = found.level.uid
