"""`haru` on the command line. `haru up` starts the API server and writes the kubeconfig.

Defaults: data in ./.haru/, port 6443 on 127.0.0.1, HTTPS with a CA generated into the data dir,
an admin bearer token kept in the data dir (so a restart keeps old kubeconfigs working). The
kubeconfig is written only once the server has answered a request, then one line names it. Runs in
the foreground until SIGINT/SIGTERM, then stops cleanly. The controllers (namespace lifecycle,
garbage collector), the scheduler and the hollow nodes (`python -m nodes`: 4 nodes in 2 racks, 8
virtual H100 on 2, or `--nodes`/`--gpus-per-node`/`--gpu-model`, or `-f cluster.yaml`) run as supervised
co-processes, or as tasks with `--embedded`, each with its own identity, never the admin's
(`identities.py`). Progress lines come while it starts; once every node
is Ready a one-screen summary follows (`summary.py`). Flags kube-apiserver refuses (a bad or
locked feature gate, admission manifests with their gate off) and a malformed cluster file stop it
before it starts. The scheduler (`python -m scheduler`, with `--scheduler-config`, `--scheduler-name`,
`--record-results` and the scheduler's part of `--feature-gates`) places pending pods; a bad
scheduler config stops it before it starts too. `haru fault gpu
NODE/DEVICE unhealthy|healthy` marks a virtual device (`nodes/devices/fault.py`); `haru fault node
NODE down|up` stops or restarts one node's kubelet (`nodes/node_fault.py`). `--controllers`
(kube-controller-manager's syntax, `*,-deployment`) picks the controllers that run. `haru
conformance` runs the conformance-style suite (`conformance/cli.py`) against any kubeconfig.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import signal
import ssl
import sys
import time

import aiohttp

from admission import assembly
from admission.policy import manifests
from apiserver import componentstatuses, runner
from apiserver.audit import options as audit_options
from apiserver.authorization import chain as authz_chain
from apiserver.authentication import options as authn_options, token_file
from apiserver.features import FeatureGates
from client import errors as client_errors
from client import event_loop, flag_values
from client import kubeconfig as client_kubeconfig
from client.rest import RestClient
from cluster import admin_binding, certs, identities, kubeconfig, summary, supervisor
from conformance import cli as conformance_cli
from controllers import builtin as controller_builtin, features as controller_features
from nodes import flags as node_flags
from nodes import node_fault
from nodes.devices import fault as fault_cmd
from scheduler import default_profile
from scheduler import features as scheduler_features


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="haru", description="A local Kubernetes v1.36 control plane.")
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="start the cluster in the foreground")
    up.add_argument("--data-dir", default=".haru", help="where objects, certificates and the kubeconfig live")
    up.add_argument("--port", type=int, default=6443, help="API server port on 127.0.0.1 (0: any free port)")
    up.add_argument("--kubeconfig", default=None, help="where to write the kubeconfig (default: DATA_DIR/kubeconfig)")
    up.add_argument("--http", action="store_true", help="serve plain HTTP instead of HTTPS")
    up.add_argument("--feature-gates", default="", help="kube-apiserver syntax, e.g. ShardedListAndWatch=false")
    up.add_argument("--admission-manifests", default=None, metavar="DIR",
                    help="load admission policies and bindings from the files in DIR (KEP-5793); they cannot be "
                         "changed through the API")
    up.add_argument("--disable-admission-plugins", default="", metavar="NAMES",
                    help="comma-separated admission plugins to turn off, of: " + ", ".join(assembly.OPTIONAL))
    up.add_argument("--authorization-mode", default=None, metavar="MODES",
                    help="ordered authorizers: Node, RBAC, AlwaysAllow, AlwaysDeny (kube-apiserver's flag; default "
                         "Node,RBAC, AlwaysAllow with --http)")
    _add_flow_control_flags(up)
    up.add_argument("--embedded", action="store_true",
                    help="run the controllers, the scheduler and the nodes as tasks in this process instead of as "
                         "co-processes")
    up.add_argument("--controllers", default="*", metavar="LIST",
                    help="the controllers to run, kube-controller-manager syntax: '*' all, 'name' on, '-name' off "
                         "(e.g. '*,-deployment')")
    up.add_argument("--scheduler-config", default=None, metavar="FILE",
                    help="a KubeSchedulerConfiguration file for the scheduler (python -m scheduler --config)")
    up.add_argument("--scheduler-name", default=None,
                    help="the schedulerName the scheduler serves (default: default-scheduler)")
    up.add_argument("--record-results", action="store_true",
                    help="the scheduler writes each attempt's filter and score results to the pod's annotations")
    _add_authentication_flags(up)
    _add_audit_flags(up)
    node_flags.add_shape_flags(up)
    conformance_cli.add_arguments(commands.add_parser(
        "conformance", help="run the Kubernetes 1.36 conformance-style suite against a cluster"))
    nodes = commands.add_parser("nodes", help="look at the hollow nodes")
    nodes_commands = nodes.add_subparsers(dest="nodes_command", required=True)
    userns_cmd = nodes_commands.add_parser("userns", help="which pod holds which user-namespace ID range, per node")
    userns_cmd.add_argument("--data-dir", default=".haru", help="the data dir `haru up` runs with")
    fault = commands.add_parser("fault", help="mark a virtual device unhealthy or healthy, or stop a node's kubelet")
    fault.add_argument("--data-dir", default=".haru", help="the data dir `haru up` runs with")
    fault.add_argument("--kubeconfig", default=None, help="the cluster to reach (default: DATA_DIR/kubeconfig)")
    fault_kinds = fault.add_subparsers(dest="fault_kind", required=True)
    fault_cmd.add_gpu_command(fault_kinds)
    node_fault.add_node_command(fault_kinds)
    return parser


def _add_flow_control_flags(up: argparse.ArgumentParser) -> None:
    """kube-apiserver's API Priority and Fairness flags, same names, meaning and defaults."""
    up.add_argument("--enable-priority-and-fairness", type=flag_values.go_bool, default=True, metavar="BOOL",
                    help="classify and queue requests by FlowSchema and priority level (API Priority and Fairness; "
                         "default true)")
    up.add_argument("--max-requests-inflight", type=int, default=400, metavar="N",
                    help="with --max-mutating-requests-inflight: the seats API Priority and Fairness shares out")
    up.add_argument("--max-mutating-requests-inflight", type=int, default=200, metavar="N",
                    help="see --max-requests-inflight")


def _add_authentication_flags(up: argparse.ArgumentParser) -> None:
    """kube-apiserver's authentication flags, same names and meaning."""
    up.add_argument("--token-auth-file", default=None, metavar="FILE",
                    help="static bearer tokens, one per line: token,user,uid,\"group1,group2\"")
    up.add_argument("--service-account-issuer", action="append", default=None, metavar="URL",
                    help="the iss of service-account tokens (repeatable: the first signs, all are accepted; "
                         f"default {authn_options.DEFAULT_ISSUER})")
    up.add_argument("--service-account-key-file", default=None, metavar="FILE",
                    help="the RSA key that signs service-account tokens (default: DATA_DIR/pki/sa.key, made once)")
    up.add_argument("--api-audiences", default="", metavar="LIST",
                    help="comma-separated audiences the API server accepts tokens for (default: the issuer)")
    up.add_argument("--service-account-jwks-uri", default="", metavar="URL",
                    help="the jwks_uri in /.well-known/openid-configuration (default: this server's /openid/v1/jwks)")


def _add_audit_flags(up: argparse.ArgumentParser) -> None:
    """kube-apiserver's audit-log flags, same names and meaning (apiserver/audit/)."""
    up.add_argument("--audit-log-path", default="", metavar="PATH",
                    help="write audit events to this file as JSON lines ('-' for stdout); needs --audit-policy-file")
    up.add_argument("--audit-policy-file", default="", metavar="FILE",
                    help="an audit.k8s.io/v1 Policy: which requests are logged, at which level")
    up.add_argument("--audit-log-maxage", type=int, default=0, metavar="DAYS",
                    help="remove rotated audit logs older than this many days (0: keep)")
    up.add_argument("--audit-log-maxbackup", type=int, default=0, metavar="N",
                    help="keep at most this many rotated audit logs (0: all)")
    up.add_argument("--audit-log-maxsize", type=int, default=0, metavar="MB",
                    help="rotate the audit log when it reaches this many megabytes (0: never)")


def _audit(args: argparse.Namespace) -> audit_options.Options:
    return audit_options.Options(
        log_path=args.audit_log_path if args.audit_log_path in ("", "-") else os.path.abspath(args.audit_log_path),
        policy_file=os.path.abspath(args.audit_policy_file) if args.audit_policy_file else "",
        max_age_days=args.audit_log_maxage, max_backups=args.audit_log_maxbackup, max_size_mb=args.audit_log_maxsize)


def _authentication(args: argparse.Namespace, data_dir: str, token: str | None) -> authn_options.Options:
    return authn_options.Options(
        admin_token=token,
        service_account_key_file=os.path.abspath(args.service_account_key_file) if args.service_account_key_file
        else os.path.join(data_dir, "pki", "sa.key"),
        issuers=tuple(args.service_account_issuer or (authn_options.DEFAULT_ISSUER,)),
        api_audiences=tuple(a.strip() for a in args.api_audiences.split(",") if a.strip()),
        jwks_uri=args.service_account_jwks_uri,
        token_auth_file=os.path.abspath(args.token_auth_file) if args.token_auth_file else None)


def _shape_args(args: argparse.Namespace) -> list[str]:
    """The flags that tell `python -m nodes` the same cluster shape."""
    if args.cluster_file:
        return ["--cluster-file", os.path.abspath(args.cluster_file)]
    return ["--nodes", str(args.nodes), "--gpus-per-node", str(args.gpus_per_node), "--gpu-model", args.gpu_model]


def _progress(text: str) -> None:
    print(f"haru: {text}", flush=True)


def _admin_token(data_dir: str) -> str:
    path = os.path.join(data_dir, "admin-token")
    if os.path.exists(path):
        with open(path) as f:
            return f.read().strip()
    token = runner.new_token()
    os.makedirs(data_dir, exist_ok=True)
    with open(path + ".partial", "w") as f:
        f.write(token)
    os.chmod(path + ".partial", 0o600)
    os.replace(path + ".partial", path)
    return token


async def _wait_until_serving(url: str, token: str, ca_pem: bytes | None) -> None:
    ssl_ctx: ssl.SSLContext | bool = False
    if ca_pem is not None:
        ssl_ctx = ssl.create_default_context(cadata=ca_pem.decode())
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{url}/readyz", headers={"Authorization": f"Bearer {token}"}, ssl=ssl_ctx) as resp:
            if resp.status != 200:
                raise RuntimeError(f"the API server answered /readyz with {resp.status}")


# Python's cyclic GC scans young objects every 700 allocations by default; a server that decodes
# thousands of JSON dicts per request (they hold no cycles: reference counting frees them) spent
# most of a 100k-object LIST in the collector (6.3 s vs 0.8 s with it off, measured). Scan far
# less often, and move what start-up loaded (schemas, registry, OpenAPI) out of its reach.
GC_THRESHOLDS = (50_000, 100, 100)


def _tune_gc() -> None:
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


async def up(args: argparse.Namespace) -> int:
    began = time.monotonic()
    shapes, grace_scale = node_flags.shape_from_args(args)
    data_dir = os.path.abspath(args.data_dir)
    token = _admin_token(data_dir)
    pki = None if args.http else certs.ensure(data_dir)
    _progress("starting the API server")
    running = await runner.start(
        data_dir, port=args.port, ssl_context=pki.ssl_context() if pki else None,
        admin_token=None if args.http else token, feature_gates=args.feature_gates,
        admission_manifests=os.path.abspath(args.admission_manifests) if args.admission_manifests else None,
        admission_plugins=_admission_plugins(args), authorization_mode=args.authorization_mode,
        authentication=_authentication(args, data_dir, None if args.http else token), audit=_audit(args),
        priority_and_fairness=args.enable_priority_and_fairness, max_requests_inflight=args.max_requests_inflight,
        max_mutating_requests_inflight=args.max_mutating_requests_inflight,
    )
    _tune_gc()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    controllers: supervisor.Component | None = None
    scheduler: supervisor.Component | None = None
    nodes: supervisor.Component | None = None
    try:
        ca_pem = pki.ca_pem() if pki else None
        await _wait_until_serving(running.url, token, ca_pem)
        config = client_kubeconfig.Config.for_url(running.url, None if args.http else token, ca_pem)
        async with RestClient(config, user_agent="haru-up") as client:
            await admin_binding.ensure(client)
            if args.record_results and pki:
                await identities.grant_result_recording(client)
            if shapes and pki:
                await identities.grant_nodes_host(client)
        path = os.path.abspath(args.kubeconfig or os.path.join(data_dir, "kubeconfig"))
        kubeconfig.write(path, running.url, token, ca_pem, pki.admin_certificate() if pki else None)
        print(f"haru is serving {running.url}; kubeconfig: {path}", flush=True)
        # The controllers are ordinary API clients; they start after the kubeconfig they read exists.
        # They are system:kube-controller-manager, with its own certificate (kubeadm's
        # controller-manager.conf), and each controller then its own ServiceAccount. Over --http
        # (no authentication, every caller is the admin) they keep the admin's kubeconfig, as the
        # scheduler and the nodes do.
        controllers_path = (identities.write_certificate_kubeconfig(pki, data_dir, running.url, identities.CONTROLLERS)
                            if pki else path)
        controllers = await supervisor.start_controllers(
            controllers_path, embedded=args.embedded, feature_gates=controller_features.select(args.feature_gates),
            only=controller_builtin.select(args.controllers), service_account_credentials=pki is not None)
        componentstatuses.register(running.server, "controller-manager", controllers.health)
        # The co-process's /healthz and /metrics (plain HTTP): a free port, shown in the summary.
        scheduler_port = None if args.embedded else supervisor.free_port()
        # The scheduler is system:kube-scheduler, with its own certificate (kubeadm's scheduler.conf).
        scheduler_path = (identities.write_certificate_kubeconfig(pki, data_dir, running.url, identities.SCHEDULER)
                          if pki else path)
        scheduler = await supervisor.start_scheduler(
            scheduler_path, feature_gates=scheduler_features.select(args.feature_gates),
            config=os.path.abspath(args.scheduler_config) if args.scheduler_config else None,
            scheduler_name=args.scheduler_name, record_results=args.record_results, embedded=args.embedded,
            port=scheduler_port)
        componentstatuses.register(running.server, "scheduler", scheduler.health)
        if shapes:
            _progress(f"starting {len(shapes)} hollow nodes")
            # Each kubelet is system:node:<name> with its own certificate (kubeadm's kubelet.conf);
            # what the nodes process reads for all of them, as haru:nodes-host.
            kubelets_dir, host_path = None, path
            if pki:
                for shape in shapes:
                    identities.write_certificate_kubeconfig(pki, data_dir, running.url, "node", shape.name)
                kubelets_dir = os.path.join(data_dir, "kubelets")
                host_path = identities.write_certificate_kubeconfig(pki, data_dir, running.url, identities.NODES_HOST)
            nodes = await supervisor.start_nodes(
                host_path, shapes=shapes, shape_args=_shape_args(args), kubelet_port=supervisor.free_port(),
                state_dir=os.path.join(data_dir, "nodes"), grace_scale=grace_scale, embedded=args.embedded,
                kubelet_kubeconfig_dir=kubelets_dir)
            async with RestClient(config, user_agent="haru-up") as client:
                not_ready = await summary.wait_nodes_ready(client, [s.name for s in shapes])
        else:
            not_ready = []
        print(summary.render(url=running.url, kubeconfig=path, shapes=shapes, gates=running.server.gates,
                             seconds=time.monotonic() - began, not_ready=not_ready,
                             scheduler_url=f"http://127.0.0.1:{scheduler_port}" if scheduler_port else None),
              flush=True)
        await stop.wait()
    finally:
        if nodes is not None:
            await nodes.stop()
        if scheduler is not None:
            await scheduler.stop()
        if controllers is not None:
            await controllers.stop()
        await running.stop()
    return 0


def _admission_plugins(args: argparse.Namespace) -> frozenset[str]:
    """The optional admission plugins haru up runs: all of them (kube-apiserver's default) but the disabled."""
    disabled = {n.strip() for n in args.disable_admission_plugins.split(",") if n.strip()}
    return frozenset(assembly.OPTIONAL) - disabled


def _check_flags(args: argparse.Namespace) -> None:
    """What kube-apiserver refuses before it starts: bad or locked feature gates, manifests without their gate."""
    try:
        gates = FeatureGates.parse(args.feature_gates)
    except ValueError as exc:
        raise ValueError(f'invalid argument "{args.feature_gates}" for "--feature-gates" flag: {exc}') from None
    if args.authorization_mode is not None:
        authz_chain.parse_modes(args.authorization_mode)  # kube-apiserver's own refusal text
    try:
        controller_builtin.select(args.controllers)
    except ValueError as exc:
        raise ValueError(f'invalid argument "{args.controllers}" for "--controllers" flag: {exc}') from None
    if args.admission_manifests:
        manifests.check_gate(gates.enabled(manifests.GATE))
    unknown = sorted({n.strip() for n in args.disable_admission_plugins.split(",") if n.strip()} - set(assembly.OPTIONAL))
    if unknown:
        raise ValueError(f"--disable-admission-plugins: unknown or not optional in haru: {', '.join(unknown)}")
    # What python -m scheduler would refuse at its start (a bad config file) stops haru up here.
    scheduler_gates = scheduler_features.parse(scheduler_features.select(args.feature_gates))
    try:
        default_profile.load_config(os.path.abspath(args.scheduler_config) if args.scheduler_config else None,
                                    scheduler_gates, args.scheduler_name)
    except Exception as exc:  # noqa: BLE001 - the config reader's own error type says what is wrong
        raise ValueError(str(exc) if str(exc).startswith("couldn't") else f"couldn't create scheduler: {exc}") from None
    node_flags.shape_from_args(args)  # a malformed cluster file stops us here, with its line and field
    if args.token_auth_file:
        try:
            token_file.load(os.path.abspath(args.token_auth_file))
        except OSError as exc:
            raise ValueError(f"--token-auth-file: {exc}") from None
    _audit(args).check()  # a malformed --audit-policy-file stops haru up here (PolicyError is a ValueError)


async def _pod_names(data_dir: str) -> dict[str, str]:
    """uid → namespace/name from the running cluster; empty when it is not up."""
    path = os.path.join(data_dir, "kubeconfig")
    if not os.path.exists(path):
        return {}
    from client.resources import PODS
    from client.retrying import NEVER
    try:
        async with RestClient(client_kubeconfig.load(path), user_agent="haru-nodes-userns", timeout=5, retry=NEVER) as c:
            listed = await c.list(PODS)
    except Exception:  # noqa: BLE001 - the files alone still answer the question
        return {}
    return {p["metadata"]["uid"]: f"{p['metadata'].get('namespace')}/{p['metadata']['name']}" for p in listed["items"]}


def nodes_userns(args: argparse.Namespace) -> int:
    """The host side of user namespaces: each node's blocks, from the kubelets' own records."""
    from nodes.kubelet import checkpoint

    data_dir = os.path.abspath(args.data_dir)
    records = checkpoint.all_userns(os.path.join(data_dir, "nodes"))
    names = event_loop.run(_pod_names(data_dir)) if records else {}
    rows = [("NODE", "POD", "UID", "HOST IDS", "LENGTH")]
    for node, pods in records.items():
        for uid, mapping in sorted(pods.items(), key=lambda item: item[1]["uidMappings"][0]["hostId"]):
            entry = mapping["uidMappings"][0]
            first, length = int(entry["hostId"]), int(entry["length"])
            rows.append((node, names.get(uid, "<unknown>"), uid, f"{first}-{first + length - 1}", str(length)))
    if len(rows) == 1:
        print("No pods with hostUsers: false.")
        return 0
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("   ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0


async def _fault(args: argparse.Namespace) -> str:
    path = args.kubeconfig or os.path.join(os.path.abspath(args.data_dir), "kubeconfig")
    async with RestClient(client_kubeconfig.load(path), user_agent="haru-fault") as rest:
        if args.fault_kind == "node":
            return await node_fault.set_kubelet_state(rest, args.node, args.state)
        return await fault_cmd.set_device_health(rest, args.target, args.state, effect=args.effect, xid=args.xid,
                                                 message=args.message)


def device_fault(args: argparse.Namespace) -> int:
    """`haru fault gpu NODE/DEVICE unhealthy|healthy` and `haru fault node NODE down|up`, through the API."""
    try:
        print(event_loop.run(_fault(args)))
    except (fault_cmd.FaultCommandError, node_fault.NodeFaultError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except client_errors.APIError as exc:
        print(f"Error from server: {exc.message or exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"haru fault: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "nodes":
        return nodes_userns(args)
    if args.command == "fault":
        return device_fault(args)
    if args.command == "conformance":
        return conformance_cli.run(args)
    if args.command == "up":
        try:
            _check_flags(args)
        except (ValueError, manifests.ManifestError) as exc:
            print(f"haru up: {exc}", file=sys.stderr)
            return 1
        try:
            return event_loop.run(up(args))
        except (OSError, manifests.ManifestError) as exc:
            print(f"haru up: {exc}", file=sys.stderr)
            return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
