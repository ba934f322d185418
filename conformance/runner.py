"""Runs checks against one cluster and returns their `Result`s.

For each check: skip it if a gate it needs is off; otherwise create a namespace for it, run it
under its timeout, then run its cleanups and delete the namespace, whatever happened. A failure
keeps the last exchanges with the API server so the report can show what broke. Called by `cli`.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from dataclasses import dataclass, field

from client import errors
from client.discovery import Discovery
from client.kubeconfig import Config
from client.resources import NAMESPACES
from client.rest import RestClient
from conformance.context import Api, Context, Skip
from conformance.registry import Check

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


@dataclass
class Result:
    check: Check
    outcome: str  # PASSED, FAILED or SKIPPED
    seconds: float
    message: str = ""  # why it failed or skipped
    trace: str = ""  # the traceback of a failure
    exchanges: list[str] = field(default_factory=list)  # the last API calls of a failure, rendered


def missing_gates(check: Check, gates: dict[str, bool]) -> list[str]:
    """The gates `check` needs that the cluster reports off (a gate the cluster does not report is assumed on)."""
    return [gate for gate in check.gates if gates.get(gate) is False]


async def run_check(check: Check, config: Config, discovery_cache: object, gates: dict[str, bool]) -> Result:
    off = missing_gates(check, gates)
    if off:
        return Result(check, SKIPPED, 0.0, f"feature gate {', '.join(off)} is off on this cluster")
    api = Api(config, discovery_cache)  # type: ignore[arg-type]
    started = time.monotonic()
    namespace = ""
    try:
        created = await api.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"generateName": "conformance-",
                                                             "labels": {"conformance.haru.dev/check": "true"}}})
        namespace = created["metadata"]["name"]
        ctx = Context(api, namespace, gates)
        await asyncio.wait_for(check.run(ctx), check.timeout)
        return Result(check, PASSED, time.monotonic() - started)
    except Skip as skip:
        return Result(check, SKIPPED, time.monotonic() - started, str(skip))
    except asyncio.TimeoutError:
        return _failure(check, started, f"the check took longer than {check.timeout:g}s", api)
    except Exception as err:  # a check fails by raising anything
        return _failure(check, started, f"{type(err).__name__}: {err}", api)
    finally:
        await _clean_up(api, namespace)


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
        if namespace:
            try:
                await api.delete(NAMESPACES, namespace)
            except errors.APIError:
                pass
    finally:
        await api.close()


async def discover(config: Config) -> object:
    async with RestClient(config, user_agent="haru-conformance/1.36") as client:
        return await Discovery(client).preferred()


async def run(checks: list[Check], config: Config, gates: dict[str, bool] | None = None) -> list[Result]:
    """Run `checks` one after another (the first version; `--parallel` comes with the CLI)."""
    discovered = await discover(config)
    return [await run_check(check, config, discovered, gates or {}) for check in checks]
