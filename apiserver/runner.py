"""Start and stop one API server: open the store, seed it, listen, and report the URL.

The one place that wires storage, registry, feature gates and the aiohttp app together; used by
`haru up` (cluster/cli.py) and by the test fixtures, so tests run the same server users do.
"""

from __future__ import annotations

import os
import secrets
import ssl
from dataclasses import dataclass

from aiohttp import web

from admission.policy import manifests
from apiserver import admitting, app as app_module
from apiserver.audit import options as audit_options
from apiserver import bootstrap as bootstrap_module, health, label_index, registry, seed
from apiserver.authorization import bootstrap_policy, chain as authz_chain
from apiserver.authentication import oidc_discovery, options as authn_options
from apiserver.context import Server
from apiserver.crds import controller as crd_controller
from apiserver.flowcontrol import config as flowcontrol_config, filter as flowcontrol, maintenance as flowcontrol_maintenance
from apiserver.features import FeatureGates
from apiserver.metrics_api import resources as metrics_resources
from storage import Store


@dataclass
class Running:
    server: Server
    runner: web.AppRunner
    url: str
    port: int
    crds: crd_controller.Controller | None = None
    admission: admitting.Follower | None = None
    bootstrap: bootstrap_module.Bootstrap | None = None
    flow_control: flowcontrol_maintenance.Maintenance | None = None

    async def stop(self) -> None:
        if self.bootstrap is not None:
            await self.bootstrap.stop()
        if self.flow_control is not None:
            await self.flow_control.stop()
        await self.runner.cleanup()
        if self.server.label_index is not None:
            await self.server.label_index.stop()
        if self.crds is not None:
            await self.crds.stop()
        if self.admission is not None:
            await self.admission.stop()
        await self.server.store.close()
        auditor = self.server.extra.get(app_module.AUDITOR)
        if auditor is not None:
            auditor.log.close()


async def start(data_dir: str, *, host: str = "127.0.0.1", port: int = 0,
                ssl_context: ssl.SSLContext | None = None, admin_token: str | None = None,
                feature_gates: str = "", admission_manifests: str | None = None,
                admission_plugins: frozenset[str] = frozenset(), authorization_mode: str | None = None,
                authentication: authn_options.Options | None = None, priority_and_fairness: bool = True,
                max_requests_inflight: int = flowcontrol_config.MAX_REQUESTS_INFLIGHT,
                max_mutating_requests_inflight: int = flowcontrol_config.MAX_MUTATING_REQUESTS_INFLIGHT,
                store_reserve_bytes: int | None = None, audit: audit_options.Options | None = None) -> Running:
    """`authentication`: the authn flags; by default the admin token alone, and the service-account
    signing key kept in `<data_dir>/pki/sa.key` (made on first use) so tokens outlive a restart.
    `priority_and_fairness`: kube-apiserver's --enable-priority-and-fairness; the two limits are its
    --max-requests-inflight and --max-mutating-requests-inflight, APF's total seats together.
    `store_reserve_bytes`: the store's up-front disk reserve (`Store.open`; None: its default).
    `audit`: the audit flags; a policy file that does not load raises `PolicyError` here."""
    os.makedirs(data_dir, exist_ok=True)
    gates = FeatureGates.parse(feature_gates)
    auditor = audit.build() if audit is not None else None
    modes = authz_chain.parse_modes(authorization_mode or authz_chain.default_mode(authenticated=admin_token is not None))
    store = await Store.open(os.path.join(data_dir, "store"), reserve_bytes=store_reserve_bytes)
    server = Server(store=store, registry=registry.Registry.builtin(gates), gates=gates, admin_token=admin_token)
    if authentication is None:
        authentication = authn_options.Options(admin_token=admin_token,
                                               service_account_key_file=os.path.join(data_dir, "pki", "sa.key"))
    try:
        server.extra["authenticator"] = authentication.build(server)  # a bad --token-auth-file stops here
    except (OSError, ValueError):
        await store.close()
        raise
    if auditor is not None:
        server.extra[app_module.AUDITOR] = auditor
    metrics_resources.register(server.registry)  # metrics-server's aggregated API, served here
    server.extra[authz_chain.AUTHORIZER] = authz_chain.Authorizer(modes, store)
    # Upstream's default roles and bindings exist before the first request is authorized.
    await bootstrap_policy.ensure(server)
    server.label_index = label_index.LabelIndex(store)
    server.label_index.start()  # built from LMDB now, then follows every commit
    # The admission chain, manifest policies (KEP-5793) loaded before the first request is served.
    try:
        built = admitting.install(server, admission_manifests, enable_plugins=admission_plugins)
    except manifests.ManifestError:
        await store.close()
        raise
    await admitting.seed(server)
    follower = admitting.Follower(server, built)
    await follower.start()
    apf = None
    if priority_and_fairness:  # the default objects exist and are digested before the first request
        fc = flowcontrol.FlowControl(store.count, flowcontrol_config.Config(
            max_requests_inflight + max_mutating_requests_inflight))
        apf = flowcontrol_maintenance.Maintenance(store, fc)
        await apf.start()
        server.extra[app_module.FLOW_CONTROL] = fc
    application = app_module.build(server)
    # Stored CRDs are served before the first request; then the controller follows changes.
    crds = await crd_controller.start(server)
    server.extra.update({health.CRD_CONTROLLER: crds, health.ADMISSION_FOLLOWER: follower})
    # Shutdown must not wait for long-running watches to end on their own.
    runner = web.AppRunner(application, handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=ssl_context, backlog=1024, reuse_address=True)
    await site.start()
    sockets = site._server.sockets if site._server else []  # type: ignore[union-attr]
    actual_port = sockets[0].getsockname()[1] if sockets else port
    # The system namespaces and default/kubernetes exist before the URL is announced, and stay.
    keeper = bootstrap_module.Bootstrap(server, seed.wanted(server, actual_port, host))
    await keeper.start()
    server.extra[health.BOOTSTRAPPED] = True
    scheme = "https" if ssl_context else "http"
    server.extra["jwks_uri"] = authentication.jwks_uri or f"{scheme}://{host}:{actual_port}{oidc_discovery.JWKS_PATH}"
    return Running(server, runner, f"{scheme}://{host}:{actual_port}", actual_port, crds, follower, keeper, apf)


def new_token() -> str:
    return secrets.token_urlsafe(32)
