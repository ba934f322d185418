"""Each controller's own identity: `--use-service-account-credentials`, as kube-controller-manager's.

`ServiceAccountClients(root)` is upstream's DynamicControllerClientBuilder: `client(account)` gives
a controller a RestClient that authenticates as `system:serviceaccount:kube-system:<account>`
with a TokenRequest token (`expirationSeconds` 3600, fetched again once 80 % of its life has gone,
a lifetime under ten minutes counted as ten: upstream's numbers). The root client (the
controller-manager's own credentials) ensures the ServiceAccount exists (create; 409 is fine)
and asks for the tokens; the shared informers stay on it. `prefetch()` starts every account's
fetch side by side, unawaited: a controller's first request waits only for its own token.
`builtin.start` builds one per run; `builtin.ACCOUNTS` names the account of each controller.
"""

from __future__ import annotations

import asyncio
import calendar
import time

from client import errors
from client.kubeconfig import Config
from client.resources import SERVICEACCOUNTS
from client.rest import RestClient
from client.token_source import CachedTokenSource

NAMESPACE = "kube-system"
EXPIRATION_SECONDS = 3600
LEEWAY = 0.2  # the share of a token's life left when it is replaced
MIN_LIFETIME = 600.0  # a shorter answer is taken for clock skew (upstream pins it to ten minutes)


def username(account: str, namespace: str = NAMESPACE) -> str:
    return f"system:serviceaccount:{namespace}:{account}"


class ServiceAccountClients:
    def __init__(self, root: RestClient, namespace: str = NAMESPACE,
                 expiration_seconds: int = EXPIRATION_SECONDS) -> None:
        self.root = root
        self.namespace = namespace
        self.expiration_seconds = expiration_seconds
        self.clients: dict[str, RestClient] = {}
        self._sources: dict[str, CachedTokenSource] = {}

    def client(self, account: str) -> RestClient:
        """The account's client, one per account (node-lifecycle and taint-eviction share node-controller)."""
        if account not in self.clients:
            source = CachedTokenSource(lambda: self._token(account))
            root = self.root.config
            # Only the server and its CA: a client certificate would authenticate before the token.
            config = Config(server=root.server, ca_pem=root.ca_pem, insecure=root.insecure, namespace=root.namespace)
            self._sources[account] = source
            agent = f"{self.root.user_agent}/{username(account, self.namespace)}"  # upstream's AddUserAgent
            self.clients[account] = RestClient(config, user_agent=agent, timeout=self.root.timeout,
                                               retry=self.root.retry, token_source=source)
        return self.clients[account]

    def prefetch(self) -> None:
        for source in self._sources.values():
            source.refresh()

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.clients.values()), return_exceptions=True)

    async def _token(self, account: str) -> tuple[str, float]:
        try:
            await self.root.create(SERVICEACCOUNTS, {"metadata": {"name": account}}, self.namespace)
        except errors.APIError as exc:
            if not errors.is_already_exists(exc):
                raise
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"expirationSeconds": self.expiration_seconds}}
        answer = await self.root.request("POST", SERVICEACCOUNTS.path(self.namespace, account, "token"), body=body)
        status = answer.get("status") or {}
        lifetime = max(_seconds_until(status.get("expirationTimestamp") or ""), MIN_LIFETIME)
        return str(status.get("token") or ""), lifetime * (1 - LEEWAY)


def _seconds_until(stamp: str) -> float:
    try:
        return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")) - time.time()
    except ValueError:
        return 0.0
