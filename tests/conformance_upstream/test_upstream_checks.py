"""The upstream-behaviour checks of `conformance/checks/` (api-machinery, node, network, auth,
storage, scheduling, instrumentation) pass against a real embedded haru cluster, through the
suite's own runner — so a haru change that breaks an upstream conformance behaviour fails here.

Two nodes, as upstream's conformance requires at least two schedulable ones. The checks run one
after another, each in its own namespace; a failure prints the check's message and its last
exchanges with the API server.
"""

from __future__ import annotations

import asyncio

import pytest

from client import kubeconfig
from conformance import registry, runner

pytestmark = [pytest.mark.slow, pytest.mark.haru_cluster(nodes=2)]
PREFIXES = ("apimachinery_", "node_", "network_", "auth_", "storage_", "scheduling_", "instrumentation_")


def _ours() -> list[registry.Check]:
    return [c for c in registry.all_checks()
            if c.kind == registry.CONFORMANCE and c.module.rpartition(".")[2].startswith(PREFIXES)]


def test_there_are_many_upstream_behaviours_and_all_are_named_as_upstream() -> None:
    checks = _ours()
    assert len(checks) >= 110, f"only {len(checks)} upstream checks"
    for check in checks:
        assert check.name.startswith("[sig-") and "  " not in check.name, check.name


def test_every_upstream_check_passes_on_haru(haru_cluster_module) -> None:  # type: ignore[no-untyped-def]
    config = kubeconfig.load(haru_cluster_module.kubeconfig, None)
    results = asyncio.run(runner.run(_ours(), config))
    failed = [r for r in results if r.outcome == runner.FAILED]
    report = "\n\n".join(f"{r.check.name}\n  {r.message}\n  " + "\n  ".join(r.exchanges[-3:]) for r in failed)
    assert not failed, f"{len(failed)} of {len(results)} checks failed:\n{report}"
    skipped = [r for r in results if r.outcome == runner.SKIPPED]
    assert not skipped, f"checks skipped on haru: {[(r.check.name, r.message) for r in skipped]}"
