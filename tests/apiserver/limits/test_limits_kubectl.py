"""Real kubectl v1.36.3 against `haru up --audit-log-path … --audit-policy-file …`: the 3 MiB body
limit, etcd's object limit, the audit events kubectl's requests leave, and a malformed policy
refused before anything starts."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import msgspec
import pytest
import yaml

from tests.conftest import ROOT, Cluster, start_haru, stop_haru

pytestmark = pytest.mark.slow

POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Request
  resources: [{group: "", resources: ["configmaps"]}]
- level: None
"""


@pytest.fixture(scope="module")
def audited_haru(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Path]]:
    root = tmp_path_factory.mktemp("audited")
    (root / "policy.yaml").write_text(POLICY)
    log = root / "audit.log"
    cluster = start_haru(str(root / "data"), "--audit-log-path", str(log), "--audit-policy-file",
                         str(root / "policy.yaml"))
    try:
        yield cluster, log
    finally:
        stop_haru(cluster)


def test_kubectl_create_of_a_body_over_3_mib_is_refused_with_413(audited_haru, tmp_path: Path) -> None:
    cluster, _ = audited_haru
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (3 * 1024 * 1024 + 1024))
    result = cluster.kubectl("create", "configmap", "big", f"--from-file={big}", check=False)
    assert result.returncode == 1
    assert result.stderr == ("error: failed to create configmap: Request entity too large: limit is 3145728\n")
    assert cluster.kubectl("get", "configmap", "big", check=False).returncode == 1


def test_kubectl_create_of_an_object_over_etcds_limit_gets_etcds_error(audited_haru, tmp_path: Path) -> None:
    cluster, _ = audited_haru
    template = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "huge", "namespace": "default"},
                "template": {"spec": {"containers": [{"name": "c", "image": "busybox", "args": ["x" * (2 << 20)]}]}}}
    manifest = tmp_path / "huge.yaml"
    manifest.write_text(yaml.safe_dump(template))
    result = cluster.kubectl("create", "-f", str(manifest), check=False)
    assert result.returncode == 1
    assert result.stderr == f'Error from server: error when creating "{manifest}": etcdserver: request is too large\n'


def test_kubectls_requests_are_in_the_audit_log(audited_haru) -> None:
    cluster, log = audited_haru
    cluster.kubectl("create", "configmap", "audited", "--from-literal=k=v")
    cluster.kubectl("get", "configmap", "audited")
    deadline = time.monotonic() + 30
    while True:  # the log is written in batches, every 20 ms
        events = [msgspec.json.decode(line) for line in log.read_bytes().splitlines()]
        mine = [e for e in events if e.get("objectRef", {}).get("name") == "audited"]
        creates = [e for e in mine if e["verb"] == "create" and e["stage"] == "ResponseComplete"]
        gets = [e for e in mine if e["verb"] == "get" and e["stage"] == "ResponseComplete"]
        if gets or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(creates) == 1 and len(gets) == 1
    assert creates[0]["userAgent"].startswith("kubectl/v1.36.3")
    assert creates[0]["requestObject"]["data"] == {"k": "v"}  # kubectl sent it as protobuf
    assert creates[0]["responseStatus"]["code"] == 201 and "responseObject" not in creates[0]
    assert gets[0]["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert all(e["objectRef"]["resource"] == "configmaps" for e in events if "objectRef" in e)  # the rest: None


def test_haru_up_refuses_a_malformed_policy_before_it_starts(tmp_path: Path) -> None:
    bad = tmp_path / "policy.yaml"
    bad.write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n")
    result = subprocess.run([sys.executable, "-m", "cluster.cli", "up", "--data-dir", str(tmp_path / "d"), "--port",
                             "0", "--audit-policy-file", str(bad), "--audit-log-path", "-"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr == (
        'haru up: loading audit policy file: rules[0].level: Unsupported value: "Everything": supported values: '
        f'"None", "Metadata", "Request", "RequestResponse": from file {bad}\n')
