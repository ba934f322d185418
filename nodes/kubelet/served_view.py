"""The kubelet endpoint's view of one hollow kubelet: `runtime_view.NodeView/PodView/ContainerView`
implemented over nodes-core's runtime (the `Kubelet`, its `PodWorker`s and their records).

`exec` runs the command in `nodes/shell.py` with the pod's env (device variables included), its
hostname, its uid_map/gid_map (`userns.mapping`) and the GPUs its claims hold (the driver's
`shell_devices`); `attach` follows the main process's output (a main `sh` with `stdin: true` reads
the attached stdin); `connect(port)` answers as `pod_ports` says; `usage` follows the container's
requests. `nodes/host.py` serves one per node.
"""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

from nodes import shell, userns
from nodes.kubelet import pod_ports, resources
from nodes.runtime.records import ContainerRecord
from nodes.runtime_view import Connection, LogLine, Streams, Usage

Obj = dict[str, Any]
_SHELLS = {"sh", "/bin/sh", "bash", "/bin/bash", "ash", "/bin/ash", "dash", "/bin/dash"}
_STREAMING_FILTERS = (["cat"], ["cat", "-"], ["/bin/cat"])
_IDLE_CPU_NANO = 1_000_000  # 1m: what an idle container shows when it requests nothing
_IDLE_MEMORY = 4 << 20


def _id_map(mapping: dict[str, Any] | None, key: str) -> str:
    entry = ((mapping or userns.mapping(None))[key] or [{}])[0]
    return shell.id_map_line(int(entry["containerId"]), int(entry["hostId"]), int(entry["length"]))


def _script(command: list[str]) -> list[str]:
    """`sh -c 'cat'` is `cat`: the argv the shell would run, for the streaming check."""
    if len(command) >= 3 and command[0] in _SHELLS and command[1] == "-c":
        return command[2].split()
    return command


class ServedContainer:
    def __init__(self, pod: "ServedPod", record: ContainerRecord) -> None:
        self.pod = pod
        self.record = record
        self.name = record.name

    def running(self) -> bool:
        return self.record.state == "running"

    def env(self) -> dict[str, str]:
        return dict(self.record.env)

    def logs(self, previous: bool = False) -> Sequence[LogLine]:
        return list(self.record.previous_logs if previous else self.record.logs)  # type: ignore[arg-type]

    async def wait_for_logs(self, seen: int) -> bool:
        while True:
            changed = self.record.changed  # notify() replaces it: take it before looking
            if len(self.record.logs) > seen:
                return True
            if self.record.state != "running":
                return False
            await changed.wait()

    def context(self, tty: bool = False) -> shell.Context:
        worker = self.pod.worker
        pod = worker.pod
        gpu_lines: list[str] = []
        dev_entries: list[str] = []
        driver = worker.kubelet.driver
        spec = self.pod.spec_of(self.name)
        if driver is not None and hasattr(driver, "shell_devices") and spec is not None:
            gpu_lines, dev_entries = driver.shell_devices(pod, spec, worker.claims)
        hostname = (pod.get("spec") or {}).get("hostname") or worker.record.name
        return shell.Context(env=self.env(), hostname=hostname, uid_map=_id_map(worker.record.userns, "uidMappings"),
                             gid_map=_id_map(worker.record.userns, "gidMappings"), gpu_lines=list(gpu_lines),
                             dev_entries=list(dev_entries), tty=tty,
                             boot_time=self.record.started_at.timestamp() if self.record.started_at else 0.0)

    async def exec(self, command: list[str], streams: Streams) -> int:
        write = _writer(streams)
        if streams.stdin is not None and _script(command) in _STREAMING_FILTERS:
            # cat copies its input as it comes (test_pod_exec_close_channel reads each line back).
            while chunk := await streams.read():
                await write("stdout", chunk.decode("utf-8", "surrogateescape"))
            return 0
        ctx = self.context(streams.tty)
        bare_shell = len(command) == 1 and command[0] in _SHELLS
        if bare_shell and streams.stdin is not None:
            # dash reads its commands a line at a time; it prompts only on a terminal.
            read_line = _tty_lines(streams, write) if streams.tty else _lines(streams)
            return await shell.interactive(ctx, read_line, write, prompt=shell.PROMPT if streams.tty else "")
        if streams.stdin is not None:
            chunks = []
            while chunk := await streams.read():
                chunks.append(chunk)
            ctx.stdin = b"".join(chunks).decode("utf-8", "surrogateescape")
        return await shell.execute(command, ctx, write)

    async def attach(self, streams: Streams) -> int | None:
        write = _writer(streams)
        record = self.record
        spec = self.pod.spec_of(self.name) or {}
        main = [*(spec.get("command") or []), *(spec.get("args") or [])]
        if streams.stdin is not None and spec.get("stdin") and len(main) == 1 and main[0] in _SHELLS:
            # `kubectl run -it … -- sh`: the main process is a shell reading the attached stdin.
            read_line = _tty_lines(streams, write) if streams.tty else _lines(streams)
            code = await shell.interactive(self.context(streams.tty), read_line, write,
                                           prompt=shell.PROMPT if streams.tty else "")
            record.exit_process(code)  # the shell was the container's process: it ends with it
            return code
        run, seen = record.container_id, len(record.logs)
        drain = asyncio.create_task(_discard(streams))  # the simulated process reads no input
        try:
            while True:
                changed = record.changed
                if record.container_id != run:
                    return record.last_terminated.get("exitCode") if record.last_terminated else None
                for line in record.logs[seen:]:
                    await write(line.stream, line.text + "\n")
                seen = len(record.logs)
                if record.state == "terminated":
                    return record.exit_code
                await changed.wait()
        finally:
            drain.cancel()

    def usage(self) -> Usage:
        spec = self.pod.spec_of(self.name) or {}
        requests = (spec.get("resources") or {}).get("requests") or {}
        cpu = resources.milli(requests["cpu"]) * 1_000_000 if "cpu" in requests else _IDLE_CPU_NANO
        memory = resources.whole(requests["memory"]) if "memory" in requests else _IDLE_MEMORY
        return Usage(cpu_nano_cores=int(cpu), memory_working_set_bytes=int(memory))


class ServedPod:
    def __init__(self, worker: Any) -> None:
        self.worker = worker
        self.namespace: str = worker.record.namespace
        self.name: str = worker.record.name
        self.uid: str = worker.uid

    def object(self) -> Obj:
        return dict(self.worker.pod)

    def spec_of(self, name: str) -> Obj | None:
        spec = self.worker.pod.get("spec") or {}
        for key in ("initContainers", "containers", "ephemeralContainers"):
            for container in spec.get(key) or []:
                if container.get("name") == name:
                    return dict(container)
        return None

    def containers(self) -> dict[str, ServedContainer]:
        return {name: ServedContainer(self, record) for name, record in self.worker.record.containers.items()
                if record.container_id}

    async def connect(self, port: int) -> Connection | None:
        records = self.worker.record.containers
        listening = pod_ports.listeners(self.worker.pod,
                                        lambda name: name in records and records[name].state == "running")
        kind = listening.get(port)
        return None if kind is None else pod_ports.connection(kind, self.worker.pod)


class ServedNode:
    def __init__(self, kubelet: Any) -> None:
        self.kubelet = kubelet
        self.name: str = kubelet.name

    def node(self) -> Obj:
        return dict(self.kubelet.node)

    def kubelet_config(self) -> Obj:
        settings = self.kubelet.node_settings
        return {"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1",
                "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": True, "cacheTTL": "2m0s"},
                                   "x509": {}},
                "authorization": {"mode": "Webhook", "webhook": {"cacheAuthorizedTTL": "5m0s",
                                                                 "cacheUnauthorizedTTL": "30s"}},
                "address": self.kubelet.host_ip, "port": self.kubelet.port, "maxPods": self.kubelet.shape.pods,
                "podCIDR": self.kubelet.shape.pod_cidr, "nodeStatusUpdateFrequency": "10s",
                "nodeStatusReportFrequency": f"{int(settings.report_interval // 60)}m0s",
                "nodeLeaseDurationSeconds": settings.lease_duration,
                "userNamespaces": {"idsPerPod": settings.ids_per_pod}}

    def pods(self) -> list[ServedPod]:
        return [ServedPod(w) for w in list(self.kubelet.workers.values())]

    def pod(self, namespace: str, name: str) -> ServedPod | None:
        for worker in list(self.kubelet.workers.values()):
            if worker.record.namespace == namespace and worker.record.name == name:
                return ServedPod(worker)
        return None

    def log_files(self) -> dict[str, str]:
        """/var/log/pods as the kubelet lays it out: `<ns>_<pod>_<uid>/<container>/<restarts>.log`, CRI lines."""
        files: dict[str, str] = {}
        for worker in list(self.kubelet.workers.values()):
            folder = f"pods/{worker.record.namespace}_{worker.record.name}_{worker.uid}"
            for record in worker.record.containers.values():
                if record.container_id:
                    files[f"{folder}/{record.name}/{record.restart_count}.log"] = "".join(
                        f"{line.time.strftime('%Y-%m-%dT%H:%M:%S.%fZ')} {line.stream} F {line.text}\n"
                        for line in record.logs)
        return files


def _writer(streams: Streams) -> Any:
    async def write(stream: str, text: str) -> None:
        target = streams.stdout if stream == "stdout" or streams.tty else streams.stderr
        if target is None:
            return
        if streams.tty:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")  # the terminal's onlcr
        await target.write(text.encode("utf-8", "surrogateescape"))
    return write


def _lines(streams: Streams) -> Any:
    async def read_line() -> str:
        return (await streams.readline()).decode("utf-8", "surrogateescape")
    return read_line


def _tty_lines(streams: Streams, write: Any) -> Any:
    """A raw terminal sends Enter as \\r and expects the echo from the other side, as a pty gives."""
    pending = bytearray()

    async def read_line() -> str:
        while True:
            for end in (b"\r", b"\n"):
                at = pending.find(end)
                if at >= 0:
                    line = bytes(pending[:at])
                    del pending[:at + 1]
                    return line.decode("utf-8", "surrogateescape") + "\n"
            chunk = await streams.read()
            if not chunk:
                line, pending[:] = bytes(pending), b""
                return line.decode("utf-8", "surrogateescape")
            await write("stdout", chunk.decode("utf-8", "surrogateescape").replace("\r", "\n"))
            pending.extend(chunk)
    return read_line


async def _discard(streams: Streams) -> None:
    while await streams.read():
        pass
