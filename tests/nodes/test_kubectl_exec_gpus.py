"""Pods that really run under `haru up`, reached through the API server's proxy by kubectl v1.36.3.

The kubelets, their endpoint (`nodes/server.py`), the adapter between them
(`nodes/kubelet/served_view.py`), the shell and the GPU driver together: `kubectl exec` (`id`, ID
maps of user-namespace pods, exit codes), `logs -f`, `attach`, `port-forward`, `nodes/proxy` on
each node's own address, a ResourceClaim allocated by hand (no scheduler yet) whose GPUs the pod
sees, and `haru fault` turning that device Unhealthy in the pod's status.
"""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests import realclients
from tests.conftest import ROOT, Cluster

pytestmark = pytest.mark.slow


def _pod(name: str, node: str, command: list[str], **spec: Any) -> str:
    container: dict[str, Any] = {"name": "main", "image": "busybox", "command": command}
    container.update(spec.pop("container", {}))
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                       "spec": {"nodeName": node, "containers": [container], **spec}})


def _run_pod(haru: Cluster, name: str, node: str, command: list[str], **spec: Any) -> None:
    haru.kubectl("apply", "-f", "-", input=_pod(name, node, command, **spec))
    haru.kubectl("wait", f"pod/{name}", "--for=condition=Ready", "--timeout=30s")


def _get(haru: Cluster, kind: str, name: str) -> dict[str, Any]:
    return json.loads(haru.kubectl("get", kind, name, "-o", "json").stdout)


def _wait_for_nodes(haru: Cluster) -> None:
    deadline = time.monotonic() + 30
    while len(haru.kubectl("get", "nodes", "-o", "name").stdout.split()) < 4:
        assert time.monotonic() < deadline, "the nodes did not register"
        time.sleep(0.1)
    haru.kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=30s")


@pytest.fixture(scope="module", autouse=True)
def nodes_up(haru: Cluster) -> None:
    _wait_for_nodes(haru)


def _id_map(haru: Cluster, pod: str, file: str) -> tuple[int, int, int]:
    inside, outside, length = haru.kubectl("exec", pod, "--", "cat", f"/proc/self/{file}").stdout.split()
    return int(inside), int(outside), int(length)


def test_exec_in_a_pod_bound_by_hand_runs_the_shell_as_root(haru: Cluster) -> None:
    _run_pod(haru, "shell", "cpu-0", ["sleep", "3600"])
    assert _get(haru, "pod", "shell")["status"]["phase"] == "Running"
    assert haru.kubectl("exec", "shell", "--", "id").stdout == "uid=0(root) gid=0(root) groups=0(root)\n"
    assert haru.kubectl("exec", "shell", "--", "hostname").stdout == "shell\n"
    failed = haru.kubectl("exec", "shell", "--", "sh", "-c", "echo out; echo err >&2; exit 3", check=False)
    assert (failed.returncode, failed.stdout) == (3, "out\n") and "err\n" in failed.stderr
    missing = haru.kubectl("exec", "shell", "--", "sh", "-c", "nosuch", check=False)
    assert missing.returncode == 127 and "sh: 1: nosuch: not found" in missing.stderr
    piped = haru.kubectl("exec", "-i", "shell", "--", "sh", input="for i in $(seq 1 3); do echo n$i; done\n")
    assert piped.stdout == "n1\nn2\nn3\n"


def test_user_namespace_pods_get_disjoint_id_maps_and_host_users_the_whole_space(haru: Cluster) -> None:
    _run_pod(haru, "userns-a", "cpu-1", ["sleep", "3600"], hostUsers=False)
    _run_pod(haru, "userns-b", "cpu-1", ["sleep", "3600"], hostUsers=False)
    _run_pod(haru, "host-users", "cpu-1", ["sleep", "3600"], hostUsers=True)
    a, b = _id_map(haru, "userns-a", "uid_map"), _id_map(haru, "userns-b", "uid_map")
    assert a[0] == b[0] == 0 and a[2] == b[2] == 65536
    assert a[1] != b[1] and (a[1] + a[2] <= b[1] or b[1] + b[2] <= a[1])  # the blocks do not overlap
    assert a[1] % 65536 == 0 and a[1] >= 65536 and b[1] % 65536 == 0 and b[1] >= 65536
    assert _id_map(haru, "userns-a", "gid_map") == a
    assert _id_map(haru, "host-users", "uid_map") == (0, 0, 4294967295)
    assert haru.kubectl("exec", "userns-a", "--", "id").stdout == "uid=0(root) gid=0(root) groups=0(root)\n"


def _read_until(process: subprocess.Popen[str], wanted: list[str], timeout: float = 30) -> list[str]:
    """Lines of a running kubectl until `wanted` have all come (kubectl keeps running).

    A thread reads, so lines already in the pipe's buffer are not missed by a select on its fd.
    """
    assert process.stdout is not None
    lines: queue.Queue[str] = getattr(process, "lines_read", None) or queue.Queue()
    if not hasattr(process, "lines_read"):
        process.lines_read = lines  # type: ignore[attr-defined]
        stdout = process.stdout
        threading.Thread(target=lambda: [lines.put(line) for line in stdout], daemon=True).start()
    got: list[str] = []
    deadline = time.monotonic() + timeout
    while not set(wanted) <= set(got):
        assert time.monotonic() < deadline, f"only got {got!r}"
        try:
            got.append(lines.get(timeout=1).rstrip("\n"))
        except queue.Empty:
            assert process.poll() is None, f"kubectl ended after {got!r}"
    return got


def _kubectl_process(haru: Cluster, *args: str) -> subprocess.Popen[str]:
    env = {"KUBECONFIG": haru.kubeconfig, "HOME": haru.data_dir, "PATH": "/usr/bin:/bin"}
    return subprocess.Popen([realclients.kubectl(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def test_logs_follow_and_attach_stream_what_the_main_process_prints(haru: Cluster) -> None:
    script = "echo first; sleep 4; echo second; sleep 4; echo third; sleep 3600"
    _run_pod(haru, "talker", "gpu-0", ["sh", "-c", script])
    follow = _kubectl_process(haru, "logs", "-f", "talker")
    attach = _kubectl_process(haru, "attach", "talker")
    try:
        assert _read_until(follow, ["first", "second", "third"])[:3] == ["first", "second", "third"]
        attached = _read_until(attach, ["third"])
        assert "first" not in attached  # attach shows what comes after it joined
        assert follow.poll() is None and attach.poll() is None  # both still follow the running process
    finally:
        for process in (follow, attach):
            process.kill()
            process.wait()
    assert haru.kubectl("logs", "talker", "--tail=1").stdout == "third\n"


def test_port_forward_reaches_the_web_server_in_the_pod(haru: Cluster) -> None:
    _run_pod(haru, "web", "cpu-0", ["nginx"], container={"image": "nginx"})
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    forward = _kubectl_process(haru, "port-forward", "pod/web", f"{port}:80")
    try:
        assert forward.stdout is not None
        assert "Forwarding from 127.0.0.1" in forward.stdout.readline()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as answer:
            assert answer.status == 200 and "<h1>Welcome to nginx!</h1>" in answer.read().decode()
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/nothing-here", timeout=30)
        assert missing.value.code == 404
    finally:
        forward.kill()
        forward.wait()


def test_nodes_proxy_reaches_each_nodes_own_kubelet(haru: Cluster) -> None:
    _run_pod(haru, "on-cpu-1", "cpu-1", ["sleep", "3600"])
    listed = json.loads(haru.kubectl("get", "--raw", "/api/v1/nodes/cpu-1/proxy/pods").stdout)
    assert "on-cpu-1" in {p["metadata"]["name"] for p in listed["items"]}
    assert {p["spec"]["nodeName"] for p in listed["items"]} == {"cpu-1"}
    other = json.loads(haru.kubectl("get", "--raw", "/api/v1/nodes/gpu-1/proxy/pods").stdout)
    assert "on-cpu-1" not in {p["metadata"]["name"] for p in other["items"]}
    assert haru.kubectl("get", "--raw", "/api/v1/nodes/gpu-1/proxy/healthz").stdout == "ok"


CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "two-gpus"},
         "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
             "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}}]}}}


def _slice_uuids(haru: Cluster, node: str) -> dict[str, str]:
    slices = json.loads(haru.kubectl("get", "resourceslices", "--field-selector", f"spec.nodeName={node}",
                                     "-o", "json").stdout)
    return {d["name"]: d["attributes"]["uuid"]["string"] for s in slices["items"] for d in s["spec"].get("devices") or []
            if "uuid" in (d.get("attributes") or {})}


def _health(haru: Cluster, pod: str) -> dict[str, str]:
    status = _get(haru, "pod", pod)["status"]["containerStatuses"][0].get("allocatedResourcesStatus") or []
    return {r["resourceID"]: r["health"] for entry in status for r in entry["resources"]}


def _wait_for_health(haru: Cluster, pod: str, resource: str, health: str) -> dict[str, str]:
    deadline = time.monotonic() + 30
    while (found := _health(haru, pod)).get(resource) != health:
        assert time.monotonic() < deadline, f"{resource} stayed {found.get(resource)}"
        time.sleep(0.2)
    return found


def _haru_fault(haru: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cluster.cli", "fault", "--kubeconfig", haru.kubeconfig, "gpu", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_a_claim_allocated_by_hand_shows_its_gpus_and_haru_fault_marks_one_unhealthy(haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=json.dumps(CLAIM))
    spec = {"resourceClaims": [{"name": "gpus", "resourceClaimName": "two-gpus"}],
            "container": {"image": "cuda", "resources": {"claims": [{"name": "gpus"}]}}}
    haru.kubectl("apply", "-f", "-", input=_pod("trainer", "gpu-1", ["sleep", "3600"], **spec))
    uid = _get(haru, "pod", "trainer")["metadata"]["uid"]
    status = {"status": {
        "allocation": {"devices": {"results": [
            {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "gpu-1", "device": "gpu-2"},
            {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "gpu-1", "device": "gpu-5"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["gpu-1"]}]}]}},
        "reservedFor": [{"resource": "pods", "name": "trainer", "uid": uid}]}}
    haru.kubectl("patch", "resourceclaim", "two-gpus", "--subresource=status", "--type=merge", "-p", json.dumps(status))
    haru.kubectl("wait", "pod/trainer", "--for=condition=Ready", "--timeout=30s")

    uuids = _slice_uuids(haru, "gpu-1")
    listed = haru.kubectl("exec", "trainer", "--", "nvidia-smi", "-L").stdout.splitlines()
    assert [line.split("(UUID: ")[1].rstrip(")") for line in listed] == [uuids["gpu-2"], uuids["gpu-5"]]
    assert all(line.startswith(f"GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-") for i, line in enumerate(listed))
    env = haru.kubectl("exec", "trainer", "--", "env").stdout
    assert f"NVIDIA_VISIBLE_DEVICES={uuids['gpu-2']},{uuids['gpu-5']}\n" in env
    assert "CUDA_VISIBLE_DEVICES=0,1\n" in env
    devices = haru.kubectl("exec", "trainer", "--", "ls", "/dev").stdout.split()
    assert {"nvidia2", "nvidia5", "nvidiactl"} <= set(devices) and "nvidia0" not in devices
    lost = "gpu.nvidia.com/gpu-1/gpu-5"
    assert _health(haru, "trainer") == {"gpu.nvidia.com/gpu-1/gpu-2": "Healthy", lost: "Healthy"}

    marked = _haru_fault(haru, "gpu-1/gpu-5", "unhealthy", "--xid", "79")
    assert marked.returncode == 0, marked.stderr
    assert marked.stdout == "node/gpu-1 gpu-5: Unhealthy (taint gpu.nvidia.com/xid=79:NoSchedule)\n"
    assert _wait_for_health(haru, "trainer", lost, "Unhealthy")["gpu.nvidia.com/gpu-1/gpu-2"] == "Healthy"
    entry = _get(haru, "pod", "trainer")["status"]["containerStatuses"][0]["allocatedResourcesStatus"][0]
    assert entry["name"] == "claim:gpus"
    assert "XID 79" in next(r["message"] for r in entry["resources"] if r["resourceID"] == lost)

    assert _haru_fault(haru, "gpu-1/gpu-5", "healthy").returncode == 0
    _wait_for_health(haru, "trainer", lost, "Healthy")
    unknown = _haru_fault(haru, "gpu-1/gpu-42", "unhealthy")
    assert unknown.returncode == 1 and 'node "gpu-1" publishes no device "gpu-42"' in unknown.stderr


def test_kubectl_run_i_rm_sh_runs_the_piped_commands_and_ends_with_the_shell(haru: Cluster) -> None:
    overrides = json.dumps({"spec": {"nodeName": "cpu-0"}})
    done = haru.kubectl("run", "debug", "-i", "--rm", "--restart=Never", "--image=busybox", f"--overrides={overrides}",
                        "--", "sh", input="id\nhostname\nexit 0\n")
    assert done.stdout.startswith("uid=0(root) gid=0(root) groups=0(root)\ndebug\n")
    assert 'pod "debug" deleted' in done.stdout
    assert haru.kubectl("get", "pod", "debug", check=False).returncode == 1  # --rm removed it
