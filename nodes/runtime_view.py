"""What the kubelet endpoint (`server.py`) reads from a hollow kubelet's runtime, which implements it.

- `NodeView`: the registered Node, its KubeletConfiguration, its pods, its log files (`/logs/`);
- `PodView`: the Pod as last written (status included), its containers, `connect(port)` (port-forward);
- `ContainerView`: log lines `(time, stream, text)` of the latest and the previous run, env, whether
  it runs, `exec` (the simulated shell), `attach` (the main process's stdin/stdout), usage.
`Streams` is the one concrete class: the endpoint builds it from a WebSocket, the runtime reads stdin
from it and writes stdout/stderr into it. The endpoint never writes pod state.
"""

from __future__ import annotations

import asyncio
import datetime
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Sequence

Stream = Literal["stdout", "stderr"]


@dataclass(frozen=True)
class LogLine:
    """The shape the endpoint reads (`runtime/records.LogLine` has the same fields)."""

    time: datetime.datetime  # aware, UTC: what `timestamps=true` prints, sinceTime compares
    stream: Stream
    text: str  # without the trailing newline


@dataclass(frozen=True)
class TerminalSize:
    width: int
    height: int


@dataclass(frozen=True)
class Usage:
    """A container's simulated usage, as the summary API reports it."""

    cpu_nano_cores: int
    memory_working_set_bytes: int


class Output(Protocol):
    async def write(self, data: bytes) -> None: ...


@dataclass(eq=False)
class Streams:
    """One exec or attach session's standard streams, as the client asked for them.

    `stdin` is None unless the client sent `stdin=true`; `read()` returns b"" once the client
    closed it (v5 close frame) or went away. `stdout`/`stderr` are None when not asked for; with a
    tty, stderr is None and everything goes to stdout. `terminal` is the last size the client sent
    on the resize channel; `resized` is set on every resize and cleared by whoever waits on it.
    """

    stdin: asyncio.Queue[bytes] | None
    stdout: Output | None
    stderr: Output | None
    tty: bool = False
    terminal: TerminalSize | None = None
    resized: asyncio.Event = field(default_factory=asyncio.Event)

    _pending: bytes = field(default=b"", init=False, repr=False)
    _ended: bool = field(default=False, init=False, repr=False)

    async def read(self) -> bytes:
        """The next chunk of stdin; b"" at its end (or when there is no stdin)."""
        if self._pending:
            chunk, self._pending = self._pending, b""
            return chunk
        if self.stdin is None or self._ended:
            return b""
        chunk = await self.stdin.get()
        self._ended = not chunk
        return chunk

    async def readline(self) -> bytes:
        """One line of stdin with its newline (an interactive shell's read); the rest at the end, then b""."""
        line = b""
        while b"\n" not in line:
            chunk = await self.read()
            if not chunk:
                return line
            line += chunk
        head, _, rest = line.partition(b"\n")
        self._pending = rest + self._pending
        return head + b"\n"


class Connection(Protocol):
    """One forwarded TCP connection to a port inside the pod."""

    async def read(self) -> bytes: ...  # b"" when the pod side closed
    async def write(self, data: bytes) -> None: ...

    async def close_write(self) -> None:
        """The client sent its last byte (a half-close); the pod side may still answer."""
        ...

    async def close(self) -> None: ...


class ContainerView(Protocol):
    name: str

    def running(self) -> bool: ...

    def env(self) -> dict[str, str]:
        """The environment its processes see (device variables included): what the shell's `env` prints."""
        ...

    def logs(self, previous: bool = False) -> Sequence[LogLine]:
        """Every line a run printed, in order.

        Without `previous`: the latest run (the running one, or the one that ended last). With it:
        the run that the status's `lastState.terminated` describes (in a CrashLoopBackOff that is
        the latest run too, as with the kubelet).
        """
        ...

    async def wait_for_logs(self, seen: int) -> bool:
        """Wait until the latest run has more than `seen` lines (True) or has ended (False)."""
        ...

    async def exec(self, command: list[str], streams: Streams) -> int:
        """Run `command` in the container (the simulated shell); returns its exit code."""
        ...

    async def attach(self, streams: Streams) -> int | None:
        """Join the main process: its new output goes to streams, stdin (if any) to it.

        Returns the exit code when the process ends; the endpoint cancels it when the client
        leaves first.
        """
        ...

    def usage(self) -> Usage: ...


class PodView(Protocol):
    namespace: str
    name: str
    uid: str

    def object(self) -> dict[str, Any]:
        """The Pod as this kubelet last saw and wrote it (spec and status)."""
        ...

    def containers(self) -> dict[str, ContainerView]:
        """Init, sidecar and regular containers that have been created, by name."""
        ...

    async def connect(self, port: int) -> Connection | None:
        """A connection to `port` in the pod's network namespace; None when nothing listens."""
        ...


class NodeView(Protocol):
    name: str

    def node(self) -> dict[str, Any]:
        """The Node object as registered (capacity, addresses, nodeInfo...)."""
        ...

    def kubelet_config(self) -> dict[str, Any]:
        """The KubeletConfiguration (kubelet.config.k8s.io/v1beta1) this kubelet runs with."""
        ...

    def pods(self) -> Sequence[PodView]: ...

    def pod(self, namespace: str, name: str) -> PodView | None: ...

    def log_files(self) -> dict[str, str]:
        """The node's /var/log as `/logs/` serves it: relative path → content (the kubelet's own log...)."""
        ...
