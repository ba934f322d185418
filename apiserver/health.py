"""`/healthz`, `/livez` and `/readyz`: the named health checks, served as kube-apiserver serves them.

Owns the checks haru can really make and the three endpoints' text: `ok`; with `?verbose` one
`[+]name ok` line per check and `livez check passed`; `?exclude=name` (repeatable) skips a check;
a failing check makes the endpoint answer 500 with `[-]name failed: reason withheld` (the reason
goes to the log only: these paths are public); `/livez/<name>` runs one check. The checks read
what `runner.start` leaves in `Server.extra` (the CRD controller, the admission follower, whether
the bootstrap objects exist). Called by `app.py` for the three paths.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aiohttp import web

from apiserver import errors
from apiserver.context import Server

log = logging.getLogger("haru.apiserver.health")
ENDPOINTS = ("healthz", "livez", "readyz")
# What `runner.start` records in Server.extra for the checks below.
CRD_CONTROLLER, ADMISSION_FOLLOWER, BOOTSTRAPPED = "crd_controller", "admission_follower", "bootstrapped"


@dataclass(frozen=True)
class Check:
    name: str
    # None when the check passes; otherwise why it failed, for the log.
    run: Callable[[Server], str | None]
    endpoints: Sequence[str] = ENDPOINTS


def _ping(server: Server) -> str | None:
    return None  # answering at all is the check


def store_answers(server: Server) -> str | None:
    """The store serves a read: one LMDB read transaction (haru's store stands where etcd does)."""
    try:
        server.store.get("/registry/core/namespaces/default")
    except Exception as exc:  # noqa: BLE001 - any failure to read is the answer
        return f"{type(exc).__name__}: {exc}"
    return None


def _followers(server: Server) -> str | None:
    # The in-memory views that follow the store (selectable labels, admission policies) play the
    # part of upstream's shared informers: a follower that stopped serves stale answers.
    stopped = []
    if server.label_index is not None and not server.label_index.running:
        stopped.append("label index")
    follower = server.extra.get(ADMISSION_FOLLOWER)
    if follower is not None and not follower.running:
        stopped.append("admission policy follower")
    return f"stopped: {', '.join(stopped)}" if stopped else None


def _crd_controller(server: Server) -> str | None:
    controller = server.extra.get(CRD_CONTROLLER)
    if controller is None:
        return "not started"
    return None if controller.running else "the CustomResourceDefinition controller stopped"


def _bootstrapped(server: Server) -> str | None:
    # The system namespaces and default/kubernetes are written just after the server listens.
    return None if server.extra.get(BOOTSTRAPPED) else "not finished"


CHECKS: tuple[Check, ...] = (
    Check("ping", _ping),
    Check("etcd", store_answers),
    Check("informer-sync", _followers, ("readyz",)),
    Check("poststarthook/start-apiextensions-controllers", _crd_controller),
    Check("poststarthook/bootstrap-controller", _bootstrapped),
)


def respond(server: Server, path: str, query: "web.MultiDictProxy[str]") -> web.Response:
    """The answer to `/<endpoint>` or `/<endpoint>/<check name>`."""
    endpoint, _, check_name = path.strip("/").partition("/")
    checks = [c for c in CHECKS if endpoint in c.endpoints]
    if check_name:
        return _one(server, endpoint, check_name, checks)
    excluded = set(query.getall("exclude", ()))
    unmatched = set(excluded)
    lines, failed = [], []
    for check in checks:
        if check.name in excluded:
            unmatched.discard(check.name)
            lines.append(f"[+]{check.name} excluded: ok\n")
            continue
        reason = check.run(server)
        if reason is None:
            lines.append(f"[+]{check.name} ok\n")
        else:
            lines.append(f"[-]{check.name} failed: reason withheld\n")
            failed.append(f"[-]{check.name} failed: {reason}")
    if unmatched:
        names = ",".join(f'"{name}"' for name in sorted(unmatched))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {names}\n")
    if failed:
        log.warning("%s check failed:\n%s", endpoint, "\n".join(failed))
        return _text("".join(lines) + f"{endpoint} check failed\n", 500)
    if "verbose" not in query:
        return _text("ok")
    return _text("".join(lines) + f"{endpoint} check passed\n")


def _one(server: Server, endpoint: str, name: str, checks: list[Check]) -> web.Response:
    for check in checks:
        if check.name == name:
            reason = check.run(server)
            return _text("ok") if reason is None else _text(f"internal server error: {reason}\n", 500)
    raise errors.route_not_found()


def _text(body: str, status: int = 200) -> web.Response:
    return web.Response(status=status, body=body.encode(), headers={
        "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"})
