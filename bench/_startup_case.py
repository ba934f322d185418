"""Cold start: `haru up` on a fresh data dir until the real kubectl's `get ns` first succeeds.

`bench.apiserver` calls `measure_startup(runs, parent)`. Each run takes a new data dir (so the CA,
the serving certificate and the admin token are generated each time, as on a first start), runs
`haru up --port 0` in its default HTTPS mode, waits for the line naming the kubeconfig, then runs
kubectl v1.36.3 with that kubeconfig and an empty discovery cache until `get ns` exits 0. The
clock starts before the exec of `haru up` and stops when kubectl exits successfully.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench import _timing
from bench._server_process import ServerProcess


@dataclass
class StartupResult:
    totals: list[float] = field(default_factory=list)  # seconds, exec → kubectl success
    to_serving: list[float] = field(default_factory=list)  # exec → "haru is serving" line
    kubectl: list[float] = field(default_factory=list)  # the kubectl part (incl. any retries)
    attempts: list[int] = field(default_factory=list)

    def describe(self) -> str:
        def p50(values: list[float]) -> str:
            return f"{_timing.median(values):.2f} s"

        return (f"{len(self.totals)} runs, fresh data dir each, HTTPS (default mode): total p50 {p50(self.totals)} "
                f"(min {min(self.totals):.2f}, max {max(self.totals):.2f}) = exec to 'serving' line p50 "
                f"{p50(self.to_serving)} + kubectl get ns p50 {p50(self.kubectl)}; kubectl attempts per run "
                f"{sorted(set(self.attempts))}")


async def _kubectl_get_ns(kubectl: str, kubeconfig: str, cache_dir: Path) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        kubectl, "--kubeconfig", kubeconfig, "--cache-dir", str(cache_dir), "--request-timeout", "5s",
        "get", "ns", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate()
    return process.returncode or 0, (out + err).decode(errors="replace")


async def measure_startup(kubectl: str, runs: int, parent: Path) -> StartupResult:
    result = StartupResult()
    for run in range(runs):
        data_dir = parent / f"startup-{run}"
        started = time.perf_counter()
        server = await ServerProcess.start_haru(data_dir, http=False)
        try:
            serving = time.perf_counter()
            attempts = 0
            while True:
                attempts += 1
                code, output = await _kubectl_get_ns(kubectl, server.kubeconfig, data_dir / "kubectl-cache")
                if code == 0:
                    break
                if attempts >= 20:
                    raise RuntimeError(f"kubectl get ns kept failing against a fresh haru: {output[-800:]}")
                await asyncio.sleep(0.01)
            done = time.perf_counter()
            if "kube-system" not in output:
                raise RuntimeError(f"kubectl get ns succeeded without listing kube-system:\n{output}")
        finally:
            await server.stop()
        result.totals.append(done - started)
        result.to_serving.append(serving - started)
        result.kubectl.append(done - serving)
        result.attempts.append(attempts)
        shutil.rmtree(data_dir, ignore_errors=True)
    return result
