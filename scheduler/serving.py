"""The scheduler's own HTTP endpoint: /healthz, /livez, /readyz and /metrics, as kube-scheduler's.

kube-scheduler serves these over HTTPS on `--secure-port` (10259); haru serves plain HTTP on the
same flag (a local, loopback-bound control plane has no certificates for its co-processes). Port 0
picks a free port; `start` returns the port it bound. Health is `Scheduler.problems()` (the same
answer componentstatuses gives); /metrics renders `Scheduler.metrics` with the queue's counts.
Started by `python -m scheduler` (scheduler/__main__.py).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def app_for(sched: Any) -> web.Application:
    """`sched` is a `scheduler.scheduler.Scheduler` (metrics, queue, problems())."""

    async def health(request: web.Request) -> web.Response:
        problems = sched.problems()
        if not problems:
            return web.Response(text="ok", content_type="text/plain")
        # Upstream's healthz lists failed checks and answers 500.
        body = "".join(f"[-]{p} failed: reason withheld\n" for p in problems)
        return web.Response(status=500, text=body + f"{request.path} check failed\n", content_type="text/plain")

    async def metrics(request: web.Request) -> web.Response:
        text = sched.metrics.render(sched.queue.pending_counts())
        return web.Response(body=text.encode(), headers={"Content-Type": CONTENT_TYPE})

    app = web.Application()
    for path in ("/healthz", "/livez", "/readyz"):
        app.router.add_get(path, health)
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
