"""The scheduler's own HTTP endpoint: /healthz, /livez, /readyz and /metrics, as kube-scheduler's.

kube-scheduler serves these over HTTPS on `--secure-port` (10259); haru serves plain HTTP on the
same flag (a local, loopback-bound control plane has no certificates for its co-processes). Port 0
picks a free port; `start` returns the port it bound. /healthz and /livez fail only when the scheduling
loop ended (`Scheduler.stalled()`); /readyz also waits for the informers (`Scheduler.problems()`,
componentstatuses' answer); /metrics renders `Scheduler.metrics` with the queue's counts.
Started by `python -m scheduler` (scheduler/__main__.py).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def app_for(sched: Any) -> web.Application:
    """`sched` is a `scheduler.scheduler.Scheduler` (metrics, queue, problems())."""

    def answer(request: web.Request, problems: list[str]) -> web.Response:
        if not problems:
            return web.Response(text="ok", content_type="text/plain")
        # As upstream's healthz package: each failed check on its own line, then "<path> check failed", 500.
        body = "[+]ping ok\n" + "".join(f"[-]{p} failed: reason withheld\n" for p in problems)
        return web.Response(status=500, text=body + f"{request.path.lstrip('/')} check failed\n",
                            content_type="text/plain")

    async def alive(request: web.Request) -> web.Response:
        return answer(request, sched.stalled())

    async def ready(request: web.Request) -> web.Response:
        # Ready once the informers synced, as kube-scheduler's sched-handler-sync readyz check.
        return answer(request, sched.problems())

    async def metrics(request: web.Request) -> web.Response:
        text = sched.metrics.render(sched.queue.pending_counts())
        return web.Response(body=text.encode(), headers={"Content-Type": CONTENT_TYPE})

    app = web.Application()
    app.router.add_get("/healthz", alive)
    app.router.add_get("/livez", alive)
    app.router.add_get("/readyz", ready)
    app.router.add_get("/metrics", metrics)
    return app


async def start(sched: Any, host: str, port: int) -> tuple[web.AppRunner, int]:
    """Serve `sched` on host:port (0: a free one); the runner to `cleanup()` and the bound port."""
    runner = web.AppRunner(app_for(sched), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, int(bound)
