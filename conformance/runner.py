"""Runs checks against one cluster, N at once, and returns their `Result`s in the registry's order.

For each check: skip it if a gate it needs is off (`gates.ClusterGates`); otherwise create a
namespace for it, wait for its default ServiceAccount (as upstream's e2e framework does), run it
under its timeout, then run its cleanups and delete the namespace,
whatever happened. Checks marked `serial` run alone, one after another, once the parallel ones
are done (they change cluster-wide state others could see). A failure keeps the last exchanges with
the API server so the report can show what broke. Called by `cli`, the CI test and the bench.

Interrupts: cancelling `run` (the CLI does on SIGINT/SIGTERM) cancels the checks in flight; each
still runs its cleanups and deletes its namespace before `run` re-raises. The namespace name is
chosen here, not by the server, so one being created when the interrupt lands is deleted too.
Every namespace, and every cluster-scoped object created through `Context.create`, carries
`LABEL`, so `sweep` can delete what a killed run (SIGKILL, a lost connection) left behind.
"""

from __future__ import annotations

import asyncio
import secrets
import time
import traceback
from dataclasses import dataclass, field
from typing import Protocol

from client import errors
from client.discovery import Discovered, Discovery
from client.kubeconfig import Config
from client.resources import NAMESPACES
from client.rest import RestClient
from conformance import gates as gates_
from conformance.context import LABEL, Api, Context, Skip
from conformance.registry import Check

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
USER_AGENT = "haru-conformance/1.36"
ACCOUNT_WAIT = 30.0  # seconds a new namespace may take to get its default ServiceAccount


@dataclass
class Result:
    check: Check
    outcome: str  # PASSED, FAILED or SKIPPED
    seconds: float
    message: str = ""  # why it failed or skipped
    trace: str = ""  # the traceback of a failure
    exchanges: list[str] = field(default_factory=list)  # the last API calls of a failure, rendered


class Listener(Protocol):
    """What the live report implements: told when a check starts and when its result is known."""

    def started(self, check: Check) -> None: ...

    def finished(self, result: Result) -> None: ...


class _Quiet:
    def started(self, check: Check) -> None:
        pass

    def finished(self, result: Result) -> None:
        pass


async def run_check(check: Check, config: Config, discovered: Discovered, gates: gates_.ClusterGates, *,
                    account_wait: float = ACCOUNT_WAIT) -> Result:
    off = gates.off(check.gates)
    if off:
        return Result(check, SKIPPED, 0.0, f"feature gate {', '.join(off)} is off on this cluster")
    api = Api(config, discovered)
    started = time.monotonic()
    namespace = _namespace_name(check)
    try:
        await api.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                      "metadata": {"name": namespace, "labels": {LABEL: "true"}}})
        ctx = Context(api, namespace, gates.values)
        if account_wait:
            await _default_account(ctx, account_wait)
        await asyncio.wait_for(check.run(ctx), check.timeout)
        return Result(check, PASSED, time.monotonic() - started)
    except Skip as skip:
        return Result(check, SKIPPED, time.monotonic() - started, str(skip))
    except asyncio.TimeoutError:
        return _failure(check, started, f"the check took longer than {check.timeout:g}s", api)
    except Exception as err:  # a check fails by raising anything
        return _failure(check, started, f"{type(err).__name__}: {err}", api)
    finally:
        # Also on cancellation: the namespace may exist even if its create had not answered yet.
        await _clean_up(api, namespace)


async def _default_account(ctx: Context, timeout: float) -> None:
    # As upstream's e2e framework does after making a test's namespace: until the ServiceAccount
    # controller made `default`, the ServiceAccount admission plugin refuses the namespace's pods.
    async def exists() -> bool:
        await ctx.get("v1", "ServiceAccount", "default")
        return True
    await ctx.eventually(exists, timeout=timeout, what="the namespace's default ServiceAccount")


def _namespace_name(check: Check) -> str:
    return f"conformance-{check.area[:30]}-{secrets.token_hex(3)}".replace("_", "-").lower()


def _failure(check: Check, started: float, message: str, api: Api) -> Result:
    return Result(check, FAILED, time.monotonic() - started, message, traceback.format_exc(),
                  [exchange.render() for exchange in api.exchanges])


async def _clean_up(api: Api, namespace: str) -> None:
    """The check's own cleanups (last first), then its namespace; never raises, always closes."""
    try:
        for cleanup in reversed(api.cleanups):
            try:
                await cleanup()
            except Exception:
                pass  # a cleanup that fails must not hide the check's own outcome
        try:
            await api.delete(NAMESPACES, namespace)
        except Exception:
            pass  # never made (create refused or interrupted early), or already going: nothing more to do
    finally:
        await api.close()


async def discover(client: RestClient) -> Discovered:
    return await Discovery(client).preferred()


async def cluster_gates(config: Config) -> gates_.ClusterGates:
    async with RestClient(config, user_agent=USER_AGENT) as client:
        return await gates_.read(client)


async def run(checks: list[Check], config: Config, *, parallel: int = 1, gates: gates_.ClusterGates | None = None,
              listener: Listener | None = None, account_wait: float = ACCOUNT_WAIT) -> list[Result]:
    """Run `checks`: the parallel ones `parallel` at a time, then the serial ones alone.

    `gates` given: used as is (tests force a gate map); else read from the cluster's /metrics.
    `account_wait` 0: do not wait for each namespace's default ServiceAccount (a bare API server
    without controllers never makes one).
    """
    listener = listener or _Quiet()
    async with RestClient(config, user_agent=USER_AGENT) as client:
        discovered = await discover(client)
        if gates is None:
            gates = await gates_.read(client)
    results: dict[int, Result] = {}
    limit = asyncio.Semaphore(max(1, parallel))

    async def one(index: int, check: Check) -> None:
        async with limit:
            listener.started(check)
            result = await run_check(check, config, discovered, gates, account_wait=account_wait)
            results[index] = result
            listener.finished(result)

    indexed = list(enumerate(checks))
    await _all(one(i, c) for i, c in indexed if not c.serial)
    for i, c in indexed:
        if c.serial:
            await one(i, c)
    return [results[i] for i in sorted(results)]


async def _all(coros) -> None:  # type: ignore[no-untyped-def]
    """Run the coroutines together; on cancellation, wait until every one has cleaned up, then re-raise."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def sweep(config: Config) -> list[str]:
    """Delete what earlier runs left: namespaces and cluster-scoped objects labelled `LABEL`.

    Returns what it deleted ("namespaces/conformance-apps-1a2b3c", …). Never run beside another run
    against the same cluster: it cannot tell a leftover from a check in flight.
    """
    deleted: list[str] = []
    async with RestClient(config, user_agent=USER_AGENT) as client:
        discovered = await discover(client)
        for resource in discovered.resources:
            if resource.namespaced or not resource.supports("list", "delete"):
                continue
            try:
                found = await client.list(resource, label_selector=f"{LABEL}=true")
            except errors.APIError:
                continue
            for item in found.get("items") or []:
                name = item["metadata"]["name"]
                try:
                    await client.delete(resource, name)
                    deleted.append(f"{resource.resource}/{name}")
                except errors.APIError as err:
                    if not errors.is_not_found(err):
                        raise
    return deleted
