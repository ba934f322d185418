"""What the simulated runtime remembers: one `PodRecord` per pod, one `ContainerRecord` per container.

A container record holds the runtime's truth about one container: its current run (containerID,
state, started/finished times, exit code), the previous run (`last_terminated`), the restart count,
its env, and its log lines (current and previous run) as `LogLine(time, stream, text)`. The pod
record adds the pod's IP, its node, and its user-namespace mapping (`userns.mapping` shape). The
kubelet's pod workers write these (`kubelet/pod_worker.py`); `Registry` is the process-wide index
that `view.RuntimeView` reads for the kubelet HTTP endpoint. Log followers wait on `changed`.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_nano(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def container_id(pod_uid: str, name: str, attempt: int) -> str:
    """containerd's shape; derived from (pod, container, attempt) so a restarted kubelet agrees with itself."""
    return "containerd://" + hashlib.sha256(f"{pod_uid}/{name}/{attempt}".encode()).hexdigest()


def normalize_image(image: str) -> str:
    """containerd's reference: docker.io/library/ for bare names, :latest when no tag or digest."""
    name = image
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    last = name.rsplit("/", 1)[-1]
    if "@" not in last and ":" not in last:
        name += ":latest"
    return name


def image_id(image: str) -> str:
    repo = normalize_image(image).split("@", 1)[0].rsplit(":", 1)[0] if "@" not in image else image.split("@", 1)[0]
    return f"{repo}@sha256:" + hashlib.sha256(normalize_image(image).encode()).hexdigest()


@dataclass
class LogLine:
    time: datetime
    stream: str  # "stdout" | "stderr"
    text: str


@dataclass
class ContainerRecord:
    name: str
    kind: str  # "init" | "sidecar" | "regular"
    image: str
    env: dict[str, str] = field(default_factory=dict)
    state: str = "waiting"  # "waiting" | "running" | "terminated"
    reason: str = ""  # the waiting or terminated reason
    message: str = ""
    container_id: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None
    exit_code: int | None = None
    restart_count: int = 0
    attempt: int = 0
    last_terminated: dict[str, Any] | None = None
    on_term: int | None = None  # what the step running now does on SIGTERM (behaviour.Step.on_term)
    logs: list[LogLine] = field(default_factory=list)
    previous_logs: list[LogLine] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    _exited: "asyncio.Future[int] | None" = field(default=None, repr=False)

    def notify(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()

    async def wait_exit(self) -> int:
        """A process that runs until killed, unless it ends on its own (`exit_process`)."""
        self._exited = asyncio.get_running_loop().create_future()
        try:
            return await self._exited
        finally:
            self._exited = None

    def exit_process(self, code: int) -> None:
        """The running process ended itself (an attached `sh` that read `exit`)."""
        if self._exited is not None and not self._exited.done():
            self._exited.set_result(code)

    def log(self, text: str, stream: str = "stdout", moment: datetime | None = None) -> None:
        self.logs.append(LogLine(moment or datetime.now(timezone.utc), stream, text))
        self.notify()


@dataclass
class PodRecord:
    uid: str
    namespace: str
    name: str
    node: str
    pod_ip: str = ""
    host_users: bool = True
    userns: dict[str, Any] | None = None  # {"uidMappings": [...], "gidMappings": [...]} when hostUsers is false
    containers: dict[str, ContainerRecord] = field(default_factory=dict)

    @property
    def userns_base(self) -> int | None:
        return self.userns["uidMappings"][0]["hostId"] if self.userns else None


class Registry:
    """Every pod record of the process, by uid, and by (namespace, name) for the endpoint."""

    def __init__(self) -> None:
        self.by_uid: dict[str, PodRecord] = {}

    def add(self, record: PodRecord) -> None:
        self.by_uid[record.uid] = record

    def remove(self, uid: str) -> None:
        self.by_uid.pop(uid, None)

    def find(self, namespace: str, name: str, uid: str | None = None) -> PodRecord | None:
        for record in self.by_uid.values():
            if record.namespace == namespace and record.name == name and (uid is None or record.uid == uid):
                return record
        return None
