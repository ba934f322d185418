"""CPU time each process spent on one side of a `bench.storage` case.

`bench._storage_rows` wraps every side's share of a case in `CpuMeter.span(side)`. Two processes
can be busy: this one (haru's store with its writer thread, the bare floor with its committer
thread, or the aetcd client and its gRPC threads) and, for etcd, the etcd server, read from
/proc/<pid>/stat. Spans of one side add up across alternating rounds; `_storage_table` prints them.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    # Fields after the parenthesised command name, which may itself hold spaces.
    fields = stat[stat.rindex(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


@dataclass
class CpuUse:
    """CPU seconds over `wall` seconds: this process's, and the server's where there is one."""

    bench: float = 0.0
    server: float | None = None
    wall: float = 0.0

    def describe(self) -> str:
        if self.server is None:
            return f"{self.bench:.2f}"
        return f"{self.server:.2f}+{self.bench:.2f}"

    def cores(self) -> float:
        """Average cores busy while the side ran (CPU seconds of both processes / wall seconds)."""
        return (self.bench + (self.server or 0.0)) / self.wall if self.wall else 0.0


class CpuMeter:
    """Adds up, per side name, what each process used during that side's spans."""

    def __init__(self, server_pids: dict[str, int] | None = None) -> None:
        self._server_pids = server_pids or {}
        self.uses: dict[str, CpuUse] = {}

    @contextlib.contextmanager
    def span(self, side: str) -> Iterator[None]:
        pid = self._server_pids.get(side)
        use = self.uses.setdefault(side, CpuUse(server=None if pid is None else 0.0))
        wall, own = time.perf_counter(), time.process_time()
        server = process_cpu_seconds(pid) if pid is not None else 0.0
        try:
            yield
        finally:
            use.bench += time.process_time() - own
            use.wall += time.perf_counter() - wall
            if pid is not None:
                use.server = (use.server or 0.0) + process_cpu_seconds(pid) - server
