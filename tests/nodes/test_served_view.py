"""`nodes/kubelet/served_view.py` over a pod worker's records: what exec and attach see and write."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from nodes import userns
from nodes.kubelet.served_view import ServedPod
from nodes.runtime.records import ContainerRecord, PodRecord
from nodes.runtime_view import Streams


@dataclass
class _Out:
    data: bytearray = field(default_factory=bytearray)

    async def write(self, chunk: bytes) -> None:
        self.data.extend(chunk)


class _Driver:
    def shell_devices(self, pod: Any, cont: Any, claims: Any) -> tuple[list[str], list[str]]:
        assert claims == {"gpus": {"metadata": {"name": "c"}}}
        return ["GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)"], ["nvidia3"]


def _pod(host_users: bool = True) -> ServedPod:
    record = PodRecord("uid-1", "default", "web", "gpu-0", host_users=host_users)
    record.userns = None if host_users else userns.mapping(196608)
    main = ContainerRecord("main", "regular", "busybox", env={"A": "1"}, state="running", container_id="containerd://x")
    record.containers["main"] = main
    record.containers["later"] = ContainerRecord("later", "regular", "busybox")  # not created yet
    pod = {"metadata": {"name": "web", "namespace": "default", "uid": "uid-1"},
           "spec": {"containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "250m"}}},
                                   {"name": "later", "image": "busybox"}]}}
    worker = SimpleNamespace(uid="uid-1", pod=pod, record=record, claims={"gpus": {"metadata": {"name": "c"}}},
                             kubelet=SimpleNamespace(driver=_Driver()))
    return ServedPod(worker)


def _streams(stdin: bool = False, tty: bool = False) -> tuple[Streams, _Out, _Out]:
    out, err = _Out(), _Out()
    return Streams(asyncio.Queue() if stdin else None, out, None if tty else err, tty=tty), out, err


async def test_only_created_containers_are_served_and_usage_follows_requests() -> None:
    containers = _pod().containers()
    assert list(containers) == ["main"]
    assert containers["main"].usage().cpu_nano_cores == 250_000_000


async def test_exec_sees_the_pods_id_maps_hostname_env_and_gpus() -> None:
    main = _pod(host_users=False).containers()["main"]
    streams, out, _ = _streams()
    assert await main.exec(["sh", "-c", "cat /proc/self/uid_map; hostname; echo $A; nvidia-smi -L"], streams) == 0
    assert out.data.decode() == ("         0     196608      65536\nweb\n1\n"
                                 "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n")
    streams, out, _ = _streams()
    await main.exec(["ls", "/dev"], streams)
    assert "nvidia3" in out.data.decode().split()
    streams, out, _ = _streams()
    await _pod().containers()["main"].exec(["cat", "/proc/self/gid_map"], streams)
    assert out.data.decode() == "         0          0 4294967295\n"


async def test_cat_on_stdin_answers_each_chunk_before_stdin_ends() -> None:
    main = _pod().containers()["main"]
    streams, out, _ = _streams(stdin=True)
    running = asyncio.create_task(main.exec(["/bin/sh", "-c", "cat"], streams))
    assert streams.stdin is not None
    streams.stdin.put_nowait(b"test-close\n")
    while not out.data:
        await asyncio.sleep(0.01)
    assert out.data == b"test-close\n" and not running.done()
    streams.stdin.put_nowait(b"")
    assert await running == 0


async def test_sh_on_a_pipe_runs_each_line_without_a_prompt_and_on_a_terminal_with_one() -> None:
    main = _pod().containers()["main"]
    streams, out, err = _streams(stdin=True)
    assert streams.stdin is not None
    for chunk in (b"echo one\n", b"echo two >&2\n", b"exit 5\n"):
        streams.stdin.put_nowait(chunk)
    assert await main.exec(["/bin/sh"], streams) == 5
    assert (out.data, err.data) == (bytearray(b"one\n"), bytearray(b"two\n"))
    streams, out, _ = _streams(stdin=True, tty=True)
    assert streams.stdin is not None
    streams.stdin.put_nowait(b"echo hi\r")
    streams.stdin.put_nowait(b"")
    assert await main.exec(["sh"], streams) == 0
    assert out.data == b"# echo hi\r\nhi\r\n# "


async def test_attach_writes_what_the_process_prints_after_joining_and_returns_its_exit_code() -> None:
    main = _pod().containers()["main"]
    main.record.log("before")
    streams, out, err = _streams()
    attached = asyncio.create_task(main.attach(streams))
    await asyncio.sleep(0)
    main.record.log("after")
    main.record.log("oops", stream="stderr")
    main.record.state, main.record.exit_code = "terminated", 2
    main.record.notify()
    assert await asyncio.wait_for(attached, 5) == 2
    assert (out.data, err.data) == (bytearray(b"after\n"), bytearray(b"oops\n"))


async def test_wait_for_logs_wakes_on_a_line_and_ends_with_the_run() -> None:
    main = _pod().containers()["main"]
    waiting = asyncio.create_task(main.wait_for_logs(0))
    await asyncio.sleep(0)
    main.record.log("line")
    assert await asyncio.wait_for(waiting, 5) is True
    main.record.state = "terminated"
    main.record.notify()
    assert await main.wait_for_logs(1) is False


async def test_connect_answers_only_where_the_pod_listens() -> None:
    pod = _pod()
    pod.worker.pod["spec"]["containers"][0]["ports"] = [{"containerPort": 7000}]
    assert await pod.connect(7001) is None
    conn = await pod.connect(7000)
    assert conn is not None
    await conn.write(b"ping")
    assert await conn.read() == b"ping"


async def test_attaching_to_a_main_sh_with_stdin_runs_it_and_its_exit_ends_the_process() -> None:
    pod = _pod()
    pod.worker.pod["spec"]["containers"][0].update({"command": ["sh"], "stdin": True})
    main = pod.containers()["main"]
    process = asyncio.create_task(main.record.wait_exit())
    await asyncio.sleep(0)
    streams, out, _ = _streams(stdin=True)
    assert streams.stdin is not None
    streams.stdin.put_nowait(b"hostname\nexit 7\n")
    assert await main.attach(streams) == 7
    assert out.data == b"web\n" and await asyncio.wait_for(process, 5) == 7
