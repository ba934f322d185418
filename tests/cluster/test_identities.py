"""cluster/identities.py: the co-processes' credentials are who upstream says they are, with exactly
their roles; the token file the embedded cluster loads names each identity once; the
`--record-results` grant gives system:kube-scheduler pods patch and nothing more."""

from __future__ import annotations

import csv
from pathlib import Path

import yaml

from apiserver import runner
from apiserver.authentication import options as authn_options
from client import kubeconfig as client_kubeconfig
from client.rest import RestClient
from cluster import identities

ADMIN = "admin-token"


def test_the_token_file_names_each_identity_in_upstreams_groups(tmp_path: Path) -> None:
    path, tokens = identities.token_file(str(tmp_path), [("scheduler", ""), ("node", "gpu-0")])
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert [(r[1], r[3] if len(r) > 3 else "") for r in rows] == [
        ("system:kube-scheduler", ""), ("system:node:gpu-0", "system:nodes")]
    assert {r[0] for r in rows} == set(tokens.values()) and len(set(tokens.values())) == 2
    written = identities.write_token_kubeconfig(str(tmp_path), "http://127.0.0.1:1", "node", tokens[("node", "gpu-0")],
                                                "gpu-0")
    assert written == str(tmp_path / "kubelets" / "gpu-0.kubeconfig")
    config = yaml.safe_load(Path(written).read_text())
    assert config["users"] == [{"name": "system:node:gpu-0", "user": {"token": tokens[("node", "gpu-0")]}}]


async def _allowed(client: RestClient, verb: str, resource: str, subresource: str = "") -> bool:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "subresource": subresource,
                                              "namespace": "default"}}}
    answer = await client.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review)
    return bool(answer["status"]["allowed"])


async def test_the_scheduler_binds_but_patches_pods_only_with_the_results_grant(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    path, tokens = identities.token_file(data, [("scheduler", "")])
    running = await runner.start(data, port=0, admin_token=ADMIN, authentication=authn_options.Options(
        admin_token=ADMIN, service_account_key_file=str(tmp_path / "sa.key"), token_auth_file=path))
    try:
        scheduler_path = identities.write_token_kubeconfig(data, running.url, "scheduler", tokens[("scheduler", "")])
        async with RestClient(client_kubeconfig.load(scheduler_path), user_agent="test") as scheduler, \
                RestClient(client_kubeconfig.Config.for_url(running.url, ADMIN, None), user_agent="test") as admin:
            assert await _allowed(scheduler, "create", "pods", "binding")
            assert await _allowed(scheduler, "patch", "pods", "status")
            assert not await _allowed(scheduler, "create", "pods")
            assert not await _allowed(scheduler, "patch", "pods")
            await identities.grant_result_recording(admin)
            await identities.grant_result_recording(admin)  # again: already there is fine
            assert await _allowed(scheduler, "patch", "pods")
            assert not await _allowed(scheduler, "update", "pods")
    finally:
        await running.stop()
