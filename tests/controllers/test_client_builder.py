"""controllers/client_builder.py against a real server with authentication: a controller's client is
its ServiceAccount kube-system/<account> (made when missing, with a TokenRequest token of an hour),
one client and token per account (an account that exists already is used as it is), and the token
is asked again after the server refused it."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiserver import runner
from apiserver.authentication import options as authn_options
from client import errors
from client.kubeconfig import Config
from client.resources import SERVICEACCOUNTS
from client.rest import RestClient
from controllers import client_builder

ADMIN = "admin-token"


async def _whoami(client: RestClient) -> str:
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    answer = await client.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body=review)
    return str(answer["status"]["userInfo"]["username"])


async def test_each_account_gets_its_own_service_account_and_token(tmp_path: Path) -> None:
    authentication = authn_options.Options(admin_token=ADMIN, service_account_key_file=str(tmp_path / "sa.key"))
    running = await runner.start(str(tmp_path / "data"), port=0, admin_token=ADMIN, authentication=authentication)
    root = RestClient(Config.for_url(running.url, ADMIN), user_agent="test")
    accounts = client_builder.ServiceAccountClients(root)
    try:
        deployments = accounts.client("deployment-controller")
        assert accounts.client("deployment-controller") is deployments
        assert deployments.user_agent == "test/system:serviceaccount:kube-system:deployment-controller"
        assert await _whoami(deployments) == "system:serviceaccount:kube-system:deployment-controller"
        assert await _whoami(accounts.client("node-controller")) == "system:serviceaccount:kube-system:node-controller"
        made = await root.get(SERVICEACCOUNTS, "deployment-controller", "kube-system")
        assert made["metadata"]["namespace"] == "kube-system"
        await root.create(SERVICEACCOUNTS, {"metadata": {"name": "job-controller"}}, "kube-system")
        assert await _whoami(accounts.client("job-controller")) == "system:serviceaccount:kube-system:job-controller"
        # The account deleted and made again: its old token is refused (401), the next request fetches anew.
        await root.delete(SERVICEACCOUNTS, "deployment-controller", "kube-system")
        await root.create(SERVICEACCOUNTS, {"metadata": {"name": "deployment-controller"}}, "kube-system")
        with pytest.raises(errors.APIError) as refused:
            await _whoami(deployments)
        assert refused.value.code == 401
        assert await _whoami(deployments) == "system:serviceaccount:kube-system:deployment-controller"
    finally:
        await accounts.close()
        await root.close()
        await running.stop()


def test_every_controller_acts_as_an_account_the_bootstrap_policy_binds() -> None:
    from apiserver.authorization import bootstrap_roles
    from controllers import builtin

    assert set(builtin.ACCOUNTS) == set(builtin.NAMES)
    bound = {name for name, _ in bootstrap_roles.CONTROLLER_ROLES}
    assert set(builtin.ACCOUNTS.values()) <= bound, set(builtin.ACCOUNTS.values()) - bound
