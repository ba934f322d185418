"""The hollow nodes under `haru up`, judged by the real kubectl v1.36.3.

One `haru up` (the `haru` fixture) for the module: the default nodes register Ready, pods bound by
hand run with the kubelet's status shape, `sleep 1` succeeds, `exit 3` under restartPolicy Always
crash-loops with the kubelet's back-off message, admission rejects what does not fit, two
`hostUsers: false` pods get disjoint ID blocks, and killing the nodes co-process loses nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

from tests.conftest import ROOT, Cluster

pytestmark = pytest.mark.slow


def _pod(name: str, node: str, command: list[str] | None = None, restart: str = "Always", **spec: Any) -> str:
    container: dict[str, Any] = {"name": "main", "image": "busybox"}
    if command is not None:
        container["command"] = command
    container.update(spec.pop("container", {}))
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                       "spec": {"nodeName": node, "restartPolicy": restart, "containers": [container], **spec}})


def _get(haru: Cluster, name: str) -> dict[str, Any]:
    return json.loads(haru.kubectl("get", "pod", name, "-o", "json").stdout)


def _wait(haru: Cluster, name: str, what: str, timeout: str = "30s") -> None:
    haru.kubectl("wait", f"pod/{name}", f"--for={what}", f"--timeout={timeout}")


def _wait_for_nodes(haru: Cluster, count: int = 4) -> None:
    """`kubectl wait --all` needs the Nodes to exist: the serving line comes before they register."""
    deadline = time.monotonic() + 30
    while len(haru.kubectl("get", "nodes", "-o", "name").stdout.split()) < count:
        assert time.monotonic() < deadline, "the nodes did not register"
        time.sleep(0.1)
    haru.kubectl("wait", "node", "--all", "--for=condition=Ready", "--timeout=30s")


@pytest.fixture(scope="module", autouse=True)
def nodes_up(haru: Cluster) -> None:
    _wait_for_nodes(haru)


def test_the_default_nodes_are_ready_with_the_kubelets_shape(haru: Cluster) -> None:
    names = haru.kubectl("get", "nodes", "-o", "name").stdout.split()
    assert names == ["node/cpu-0", "node/cpu-1", "node/gpu-0", "node/gpu-1"]
    node = json.loads(haru.kubectl("get", "node", "gpu-0", "-o", "json").stdout)
    labels = node["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == "gpu-0" and labels["kubernetes.io/os"] == "linux"
    assert labels["node.kubernetes.io/instance-type"] == "p5.48xlarge"
    assert labels["topology.kubernetes.io/rack"] == "rack-1" and labels["topology.kubernetes.io/zone"] == "local-a"
    status = node["status"]
    assert status["nodeInfo"]["kubeletVersion"] == "v1.36.3"
    assert [c["type"] for c in status["conditions"]] == ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
    assert status["conditions"][-1]["reason"] == "KubeletReady"
    assert status["addresses"] == [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": "gpu-0"}]
    assert status["daemonEndpoints"]["kubeletEndpoint"]["Port"] > 0
    assert set(status["capacity"]) >= {"cpu", "memory", "pods", "ephemeral-storage"}
    assert node["spec"]["providerID"] == "haru://gpu-0" and node["spec"]["podCIDR"] == "10.128.0.0/24"
    lease = json.loads(haru.kubectl("get", "lease", "gpu-0", "-n", "kube-node-lease", "-o", "json").stdout)
    assert lease["spec"]["holderIdentity"] == "gpu-0" and lease["spec"]["leaseDurationSeconds"] == 40
    assert lease["metadata"]["ownerReferences"][0]["uid"] == node["metadata"]["uid"]


def test_a_pod_bound_by_hand_runs_with_the_kubelets_status(haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=_pod("web", "cpu-0", container={"image": "nginx"}))
    _wait(haru, "web", "condition=Ready")
    pod = _get(haru, "web")
    status = pod["status"]
    assert status["phase"] == "Running"
    assert [c["type"] for c in status["conditions"]] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert all(c["status"] == "True" for c in status["conditions"])
    # Each node has its own loopback InternalIP (nodes/host.py): cpu-0 is the third node.
    assert status["hostIP"] == "127.0.0.3" and status["podIP"].startswith("10.128.2.")
    assert status["qosClass"] == "BestEffort" and status["startTime"]
    (cs,) = status["containerStatuses"]
    assert cs["image"] == "docker.io/library/nginx:latest" and cs["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert cs["containerID"].startswith("containerd://") and cs["ready"] and cs["started"]
    assert cs["restartCount"] == 0 and cs["lastState"] == {} and "running" in cs["state"]
    out = haru.kubectl("get", "pod", "web", "-o", "wide").stdout
    assert "Running" in out and "cpu-0" in out


def test_sleep_1_succeeds(haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=_pod("nap", "cpu-1", ["sleep", "1"], restart="Never"))
    _wait(haru, "nap", "jsonpath={.status.phase}=Succeeded")
    status = _get(haru, "nap")["status"]
    terminated = status["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PodCompleted") and "message" not in ready


def test_exit_3_under_restart_always_crash_loops(haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=_pod("crash", "cpu-1", ["sh", "-c", "exit 3"]))
    _wait(haru, "crash", "jsonpath={.status.containerStatuses[0].state.waiting.reason}=CrashLoopBackOff")
    pod = _get(haru, "crash")
    cs = pod["status"]["containerStatuses"][0]
    uid = pod["metadata"]["uid"]
    assert cs["state"]["waiting"]["message"] == f"back-off 10s restarting failed container=main pod=crash_default({uid})"
    assert cs["restartCount"] == 1
    assert (cs["lastState"]["terminated"]["exitCode"], cs["lastState"]["terminated"]["reason"]) == (3, "Error")
    assert pod["status"]["phase"] == "Running"
    assert "CrashLoopBackOff" in haru.kubectl("get", "pod", "crash").stdout
    events = haru.kubectl("get", "events", "--field-selector", "involvedObject.name=crash", "-o", "json").stdout
    assert "BackOff" in {e["reason"] for e in json.loads(events)["items"]}


def test_a_pod_that_does_not_fit_is_rejected_as_the_kubelet_does(haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=_pod("greedy", "cpu-0", container={"resources": {"requests": {"cpu": "64"}}}))
    _wait(haru, "greedy", "jsonpath={.status.phase}=Failed")
    status = _get(haru, "greedy")["status"]
    assert status["reason"] == "OutOfcpu"
    assert status["message"] == ("Pod was rejected: Node didn't have enough resource: cpu, requested: 64000, "
                                 "used: 0, capacity: 16000")
    haru.kubectl("apply", "-f", "-", input=_pod("picky", "cpu-0", nodeSelector={"topology.kubernetes.io/rack": "rack-2"}))
    _wait(haru, "picky", "jsonpath={.status.reason}=NodeAffinity")
    assert _get(haru, "picky")["status"]["message"] == \
        "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"
    # A label added a moment ago counts: the kubelet reads its Node again before rejecting on affinity.
    haru.kubectl("label", "node", "cpu-0", "team=ml")
    haru.kubectl("apply", "-f", "-", input=_pod("welcome", "cpu-0", nodeSelector={"team": "ml"}))
    _wait(haru, "welcome", "condition=Ready")


def test_deleting_a_running_pod_removes_it_after_its_scaled_grace(haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=_pod("doomed", "cpu-0", ["sleep", "3600"]))
    _wait(haru, "doomed", "condition=Ready")
    haru.kubectl("delete", "pod", "doomed", "--wait=true", "--timeout=30s")
    assert haru.kubectl("get", "pod", "doomed", check=False).returncode != 0


def _userns_files(haru: Cluster, uid: str) -> dict[str, Any]:
    for node in os.listdir(os.path.join(haru.data_dir, "nodes")):
        path = os.path.join(haru.data_dir, "nodes", node, "pods", uid, "userns")
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
    raise AssertionError(f"no userns record for pod {uid}")


def test_two_host_users_false_pods_get_disjoint_id_blocks(haru: Cluster) -> None:
    for name in ("ns-a", "ns-b"):
        haru.kubectl("apply", "-f", "-", input=_pod(name, "gpu-1", ["sleep", "3600"], hostUsers=False))
    for name in ("ns-a", "ns-b"):
        _wait(haru, name, "condition=Ready")
    blocks = []
    for name in ("ns-a", "ns-b"):
        mapping = _userns_files(haru, _get(haru, name)["metadata"]["uid"])
        (uid_map,), (gid_map,) = mapping["uidMappings"], mapping["gidMappings"]
        assert uid_map == gid_map and uid_map["containerId"] == 0 and uid_map["length"] == 65536
        assert uid_map["hostId"] % 65536 == 0 and uid_map["hostId"] >= 65536
        blocks.append((uid_map["hostId"], uid_map["hostId"] + uid_map["length"]))
    (a0, a1), (b0, b1) = sorted(blocks)
    assert a1 <= b0
    table = subprocess.run([sys.executable, "-m", "cluster.cli", "nodes", "userns", "--data-dir", haru.data_dir],
                           cwd=ROOT, capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    assert table[0].split() == ["NODE", "POD", "UID", "HOST", "IDS", "LENGTH"]
    mine = {row.split()[1]: row.split() for row in table[1:] if row.split()[1] in ("default/ns-a", "default/ns-b")}
    assert {tuple(mine[k][3].split("-")) for k in mine} == {(str(a0), str(a1 - 1)), (str(b0), str(b1 - 1))}
    assert all(row[0] == "gpu-1" and row[4] == "65536" for row in mine.values())


def _nodes_process(haru: Cluster) -> int:
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if ppid == haru.process.pid and b"nodes" in argv and b"-m" in argv:
            return int(entry)
    raise AssertionError("no nodes co-process under haru up")


def test_killing_the_nodes_co_process_loses_nothing(haru: Cluster) -> None:
    haru.kubectl("apply", "-f", "-", input=_pod("steady", "gpu-0", ["sleep", "3600"], hostUsers=False))
    _wait(haru, "steady", "condition=Ready")
    before = _get(haru, "steady")
    mapping_before = _userns_files(haru, before["metadata"]["uid"])
    old = _nodes_process(haru)
    os.kill(old, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if _nodes_process(haru) != old:
                break
        except AssertionError:
            pass
        time.sleep(0.1)
    # A pod bound after the restart runs: the new kubelets are up and watching.
    haru.kubectl("apply", "-f", "-", input=_pod("after", "gpu-0", ["sleep", "3600"], hostUsers=False))
    _wait(haru, "after", "condition=Ready")
    after = _get(haru, "steady")
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert after["status"]["phase"] == "Running"
    assert after["status"]["startTime"] == before["status"]["startTime"]
    assert after["status"]["podIP"] == before["status"]["podIP"]
    keep = ("containerID", "restartCount", "state", "imageID")
    assert [{k: c[k] for k in keep} for c in after["status"]["containerStatuses"]] == \
        [{k: c[k] for k in keep} for c in before["status"]["containerStatuses"]]
    assert _userns_files(haru, before["metadata"]["uid"]) == mapping_before
    other = _userns_files(haru, _get(haru, "after")["metadata"]["uid"])
    assert other["uidMappings"][0]["hostId"] != mapping_before["uidMappings"][0]["hostId"]
    assert _get(haru, "after")["status"]["podIP"] != before["status"]["podIP"]


def test_a_malformed_cluster_file_stops_haru_up_with_the_line_and_field(tmp_path) -> None:
    bad = tmp_path / "cluster.yaml"
    bad.write_text("pools:\n- name: gpu\n  count: 2\n  taints:\n  - {key: a, effect: Never}\n")
    result = subprocess.run([sys.executable, "-m", "cluster.cli", "up", "--data-dir", str(tmp_path / "d"),
                             "--port", "0", "-f", str(bad)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f'{bad}:5: pools[0].taints[0].effect: must be one of NoSchedule, PreferNoSchedule, NoExecute, got "Never"' \
        in result.stderr


def test_embedded_nodes_run_pods_too(tmp_path) -> None:
    from tests.conftest import start_haru, stop_haru

    cluster = start_haru(str(tmp_path / "embedded"), "--embedded", "--nodes", "1", "--gpu-model", "a100")
    try:
        _wait_for_nodes(cluster, count=1)
        node = json.loads(cluster.kubectl("get", "node", "gpu-0", "-o", "json").stdout)
        assert node["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "p4de.24xlarge"
        cluster.kubectl("apply", "-f", "-", input=_pod("quick", "gpu-0", ["true"], restart="Never"))
        _wait(cluster, "quick", "jsonpath={.status.phase}=Succeeded")
    finally:
        stop_haru(cluster)
