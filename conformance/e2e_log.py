"""A run as `e2e.log`, in the layout sonobuoy's e2e plugin leaves (ginkgo v2's verbose output).

A header (suite, cluster, "Will run N of M specs"), then one block per check between
`------------------------------` rules: `• [PASSED] [0.123 seconds]`, `• [FAILED] […]` with the
failure and the exchanges with the API server, or `S [SKIPPED] […]` with the reason; then, after
any "Summarizing N Failures" list, ginkgo's footer: `Ran N of M Specs in X seconds`,
`SUCCESS! -- P Passed | F Failed | 0 Pending | S Skipped` (or `FAIL! -- …`) and `PASS`/`FAIL`.
As in ginkgo, "ran" counts the checks that ran (passed or failed); M is every check registered,
so the ones filtered out by --focus/--skip or skipped by a gate count as Skipped. Called by `cli`.
"""

from __future__ import annotations

from conformance import runner

RULE = "------------------------------"


def render(results: list[runner.Result], registered: int, seconds: float, *, cluster: str = "") -> str:
    ran = [r for r in results if r.outcome != runner.SKIPPED]
    failed = [r for r in results if r.outcome == runner.FAILED]
    lines = [f"Running Suite: haru conformance (Kubernetes 1.36){' - ' + cluster if cluster else ''}",
             "=" * 64, f"Will run {len(results)} of {registered} specs", RULE]
    for result in results:
        lines += _block(result)
        lines.append(RULE)
    if failed:
        lines += ["", f"Summarizing {len(failed)} Failure{'s' if len(failed) != 1 else ''}:"]
        lines += [f"  [FAIL] {r.check.name}" for r in failed]
    passed = len(ran) - len(failed)
    verdict = "FAIL!" if failed else "SUCCESS!"
    lines += ["", f"Ran {len(ran)} of {registered} Specs in {seconds:.3f} seconds",
              f"{verdict} -- {passed} Passed | {len(failed)} Failed | 0 Pending | {registered - len(ran)} Skipped",
              "FAIL" if failed else "PASS"]
    return "\n".join(lines) + "\n"


def _block(result: runner.Result) -> list[str]:
    check = result.check
    mark = "S" if result.outcome == runner.SKIPPED else "•"
    head = [f"{mark} [{result.outcome.upper()}] [{result.seconds:.3f} seconds]",
            f"{check.name}{' ' + check.tags if check.tags else ''}", f"{check.module.replace('.', '/')}.py"]
    if result.outcome == runner.SKIPPED:
        return head + [f"  [SKIPPED] {result.message}"]
    if result.outcome == runner.FAILED:
        body = [f"  [FAILED] {result.message}"]
        for exchange in result.exchanges:
            body += ["  " + line for line in exchange.splitlines()]
        return head + body
    return head
