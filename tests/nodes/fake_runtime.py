"""An in-test implementation of `nodes.runtime_view`: just enough runtime to drive the endpoint.

Containers print the log lines a test gives them; `exec` knows a handful of commands (echo, exit,
cat (stdin to stdout), env, size (the terminal), warn (to stderr), sleep); attach relays stdin to
stdout and stops when told; a pod listens on the ports a test opens with an echo server behind
each. This is a fake for tests only; the product's runtime is nodes-core's.
"""

from __future__ import annotations

import asyncio
import datetime
from dataclasses import dataclass, field
from typing import Any

from nodes.runtime_view import LogLine, Streams, Usage

T0 = datetime.datetime(2026, 12, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)


@dataclass(eq=False)
class FakeContainer:
    name: str
    is_running: bool = True
    lines: list[LogLine] = field(default_factory=list)
    previous_lines: list[LogLine] = field(default_factory=list)
    environment: dict[str, str] = field(default_factory=dict)
    cpu: int = 250_000_000
    memory: int = 64 * 2**20
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    attach_done: asyncio.Event = field(default_factory=asyncio.Event)
    execs: list[list[str]] = field(default_factory=list)

    def print(self, text: str, stream: str = "stdout", at: datetime.datetime | None = None) -> None:
        stamp = at or T0 + datetime.timedelta(seconds=len(self.lines))
        self.lines.append(LogLine(stamp, stream, text))  # type: ignore[arg-type]
        self.changed.set()

    def stop(self) -> None:
        self.is_running = False
        self.changed.set()
        self.attach_done.set()

    def running(self) -> bool:
        return self.is_running

    def env(self) -> dict[str, str]:
        return dict(self.environment)

    def logs(self, previous: bool = False) -> list[LogLine]:
        return list(self.previous_lines if previous else self.lines)

    async def wait_for_logs(self, seen: int) -> bool:
        while len(self.lines) <= seen:
            if not self.is_running:
                return False
            self.changed.clear()
            await self.changed.wait()
        return True

    async def exec(self, command: list[str], streams: Streams) -> int:
        self.execs.append(command)
        verb, args = (command[0], command[1:]) if command else ("", [])
        out = streams.stdout
        if verb == "echo" and out:
            await out.write((" ".join(args) + "\n").encode())
            return 0
        if verb == "exit":
            return int(args[0])
        if verb == "env" and out:
            await out.write("".join(f"{k}={v}\n" for k, v in self.environment.items()).encode())
            return 0
        if verb == "warn" and streams.stderr:
            await streams.stderr.write((" ".join(args) + "\n").encode())
            return 1
        if verb == "cat":
            while chunk := await streams.read():
                if out:
                    await out.write(chunk)
            return 0
        if verb == "size":
            await streams.resized.wait()
            size = streams.terminal
            if out and size:
                await out.write(f"{size.height} {size.width}\n".encode())
            return 0
        if verb == "sleep":
            await asyncio.sleep(float(args[0]))
            return 0
        if streams.stderr:
            await streams.stderr.write(f"sh: {verb}: not found\n".encode())
        return 127

    async def attach(self, streams: Streams) -> int | None:
        async def relay() -> None:
            while chunk := await streams.read():
                if streams.stdout:
                    await streams.stdout.write(chunk)

        if streams.stdout:
            await streams.stdout.write(b"attached\n")
        pump = asyncio.create_task(relay())
        await self.attach_done.wait()
        pump.cancel()
        return 0

    def usage(self) -> Usage:
        return Usage(self.cpu, self.memory)


class _Echo:
    """A connection whose pod side echoes what it gets, upper-cased, and closes on "bye"."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()

    async def read(self) -> bytes:
        return await self.queue.get()

    async def write(self, data: bytes) -> None:
        self.queue.put_nowait(data.upper())
        if data.strip() == b"bye":
            self.queue.put_nowait(b"")

    async def close_write(self) -> None:
        self.queue.put_nowait(b"")  # like a server that answers what it got, then hangs up

    async def close(self) -> None:
        self.queue.put_nowait(b"")


@dataclass(eq=False)
class FakePod:
    namespace: str
    name: str
    uid: str
    spec: dict[str, Any]
    status: dict[str, Any]
    by_name: dict[str, FakeContainer]
    listening: set[int] = field(default_factory=set)

    def object(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": self.name, "namespace": self.namespace, "uid": self.uid},
                "spec": self.spec, "status": self.status}

    def containers(self) -> dict[str, FakeContainer]:
        return dict(self.by_name)

    async def connect(self, port: int) -> _Echo | None:
        return _Echo() if port in self.listening else None


def running_status(names: list[str], started: str = "2026-12-01T12:00:00Z") -> dict[str, Any]:
    return {"phase": "Running", "startTime": started,
            "containerStatuses": [{"name": n, "ready": True, "restartCount": 0, "image": "busybox",
                                   "imageID": "", "containerID": f"containerd://{n}",
                                   "state": {"running": {"startedAt": started}}} for n in names]}


@dataclass(eq=False)
class FakeNode:
    name: str = "node-a"
    anonymous: bool = True
    by_key: dict[tuple[str, str], FakePod] = field(default_factory=dict)

    def add(self, name: str, containers: list[str], *, namespace: str = "default",
            status: dict[str, Any] | None = None) -> FakePod:
        pod = FakePod(namespace, name, f"uid-{name}", {"containers": [{"name": n, "image": "busybox"}
                                                                     for n in containers]},
                      status or running_status(containers), {n: FakeContainer(n) for n in containers})
        self.by_key[(namespace, name)] = pod
        return pod

    def node(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.name, "creationTimestamp": "2026-12-01T11:00:00Z"},
                "status": {"capacity": {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "100Gi", "pods": "110"},
                           "nodeInfo": {"kubeletVersion": "v1.36.3", "machineID": "m-1", "systemUUID": "s-1",
                                        "bootID": "b-1"}}}

    def kubelet_config(self) -> dict[str, Any]:
        return {"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1",
                "authentication": {"anonymous": {"enabled": self.anonymous}, "webhook": {"enabled": True}},
                "authorization": {"mode": "Webhook"}, "nodeStatusUpdateFrequency": "10s"}

    def log_files(self) -> dict[str, str]:
        return {"kubelet.log": "I1201 started\n", "pods/default_web/c/0.log": "hi\n"}

    def pods(self) -> list[FakePod]:
        return list(self.by_key.values())

    def pod(self, namespace: str, name: str) -> FakePod | None:
        return self.by_key.get((namespace, name))
