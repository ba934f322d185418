"""Child processes the API benchmark talks to: `haru up`, the API server alone, the aiohttp anchor.

`bench.apiserver` runs every server in its own process so that the load it generates here does
not share an interpreter (or a GIL) with the server it measures. `ServerProcess.start` waits for
the line the server prints once it answers requests, and `memory()` reads the child's resident
set from /proc. Whoever starts a process stops it (`stop`, SIGTERM then SIGKILL).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_SERVING = re.compile(r"serving (\S+?);? ")


@dataclass(frozen=True)
class Memory:
    """From /proc/<pid>/status, in MB (10^6 bytes). RssFile includes the touched LMDB map pages."""

    rss: float
    rss_anon: float
    rss_file: float
    peak: float  # VmHWM: the largest RSS the process has had

    def describe(self) -> str:
        return (f"RSS {self.rss:,.0f} MB (anon {self.rss_anon:,.0f} MB, file-backed {self.rss_file:,.0f} MB), "
                f"peak {self.peak:,.0f} MB")


def read_memory(pid: int) -> Memory:
    fields: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                fields[name] = int(rest.split()[0]) * 1024 / 1e6
    return Memory(fields["VmRSS"], fields["RssAnon"], fields["RssFile"], fields["VmHWM"])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far (/proc/<pid>/stat utime + stime)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def scheduler_seconds(pid: int) -> tuple[float, float]:
    """(on a CPU, runnable but waiting for one) summed over the process's threads, from schedstat.

    The second figure is how long other processes on the machine kept this one waiting: on two
    shared cores it explains latencies that the server's own CPU time does not.
    """
    running = waiting = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                on_cpu, queued, _ = f.read().split()
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue  # a thread that ended meanwhile
        running += int(on_cpu)
        waiting += int(queued)
    return running / 1e9, waiting / 1e9


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


class ServerProcess:
    """One server child process: its URL once it serves, its pid, its output in `log_path`."""

    def __init__(self, process: asyncio.subprocess.Process, log_path: Path, name: str) -> None:
        self.process = process
        self.log_path = log_path
        self.name = name
        self.url = ""
        self.kubeconfig = ""
        self.ready_after = float("nan")  # seconds from exec to the "serving" line
        self._drain: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    @classmethod
    async def start_haru(cls, data_dir: Path, *, http: bool = True, timeout: float = 60.0) -> ServerProcess:
        """`python -m cluster.cli up --data-dir DIR --port 0 [--http]`, up to its serving line."""
        args = ["-m", "cluster.cli", "up", "--data-dir", str(data_dir), "--port", "0"]
        if http:
            args.append("--http")
        return await cls._start("haru", args, data_dir / "haru-up.log", timeout)

    @classmethod
    async def start_apiserver(cls, data_dir: Path, *, timeout: float = 60.0, extra: tuple[str, ...] = (),
                              name: str = "haru apiserver") -> ServerProcess:
        """The API server alone (`bench._apiserver_child`): `haru up --http` without co-processes."""
        return await cls._start(name, ["-m", "bench._apiserver_child", str(data_dir), *extra],
                                data_dir / "apiserver.log", timeout)

    @classmethod
    async def start_trivial(cls, body_path: Path, log_dir: Path, timeout: float = 30.0) -> ServerProcess:
        """`python -m bench._trivial_server BODY`: the aiohttp ceiling, serving the same bytes."""
        return await cls._start("trivial aiohttp", ["-m", "bench._trivial_server", str(body_path)],
                                log_dir / "trivial-server.log", timeout)

    @classmethod
    async def _start(cls, name: str, args: list[str], log_path: Path, timeout: float) -> ServerProcess:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(log_path, "wb")
        started = time.perf_counter()
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable, *args, cwd=str(REPO), env=child_env(),
                stdout=asyncio.subprocess.PIPE, stderr=log, start_new_session=True,
            )
        finally:
            log.close()  # the child holds its own descriptor
        server = cls(process, log_path, name)
        try:
            await asyncio.wait_for(server._await_serving(started), timeout)
        except BaseException:
            await server.stop()
            raise
        return server

    async def _await_serving(self, started: float) -> None:
        assert self.process.stdout is not None
        while True:
            line = await self.process.stdout.readline()
            if not line:
                code = await self.process.wait()
                raise RuntimeError(f"{self.name} exited ({code}) before serving; see {self.log_path}:\n"
                                   + self.log_path.read_text(errors="replace")[-2000:])
            text = line.decode(errors="replace")
            found = _SERVING.search(text)
            if found:
                self.ready_after = time.perf_counter() - started
                self.url = found.group(1)
                if "kubeconfig:" in text:
                    self.kubeconfig = text.split("kubeconfig:", 1)[1].strip()
                break
        # Keep reading so a chatty child never blocks on a full pipe.
        self._drain = asyncio.ensure_future(self._discard_output())

    async def _discard_output(self) -> None:
        assert self.process.stdout is not None
        while await self.process.stdout.read(65536):
            pass

    def memory(self) -> Memory:
        return read_memory(self.pid)

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def scheduler_seconds(self) -> tuple[float, float]:
        return scheduler_seconds(self.pid)

    def children(self) -> list[int]:
        """Pids of this process's direct children (haru up's co-processes)."""
        try:
            with open(f"/proc/{self.pid}/task/{self.pid}/children") as f:
                return [int(p) for p in f.read().split()]
        except FileNotFoundError:
            return []

    async def stop(self, grace: float = 10.0) -> int | None:
        if self.process.returncode is None:
            try:
                self.process.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                await asyncio.wait_for(self.process.wait(), grace)
            except asyncio.TimeoutError:
                self.process.kill()
                await self.process.wait()
        if self._drain is not None:
            self._drain.cancel()
            await asyncio.gather(self._drain, return_exceptions=True)
        return self.process.returncode
