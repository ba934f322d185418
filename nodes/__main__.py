"""`python -m nodes --kubeconfig PATH`: run the hollow kubelets as a co-process.

The cluster's shape comes from `--cluster-file F` (see `cluster_file.py`) or from `--nodes`,
`--gpus-per-node` and `--gpu-model`; a malformed file stops it before it connects (exit 2). It
connects with the kubeconfig (any cluster, not only haru), waits until the API server answers,
starts every kubelet over one client with the kubelet endpoint (`host.start`), and runs
until SIGTERM or SIGINT, then stops without touching the pods (a restart resumes them).
`cluster/supervisor.py` starts and restarts it.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys

from client import event_loop, kubeconfig, startup
from client.rest import RestClient
from nodes import flags, host, pools
from nodes.kubelet import node_object
from nodes.kubelet.kubelet import NodeSettings
from nodes.kubelet.pod_worker import Settings

log = logging.getLogger("haru.nodes")
USER_AGENT = f"kubelet/{node_object.KUBELET_VERSION} (linux/amd64) haru-nodes"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m nodes", description="haru's hollow kubelets")
    p.add_argument("--kubeconfig", required=True, help="kubeconfig to reach the API server with")
    p.add_argument("--context", default=None, help="kubeconfig context (default: current-context)")
    flags.add_shape_flags(p)
    p.add_argument("--state-dir", default=None,
                   help="where the kubelets keep their checkpoints (default: nodes/ beside the kubeconfig)")
    p.add_argument("--address", default="127.0.0.1", help="the nodes' InternalIP, where the kubelet endpoint listens")
    p.add_argument("--kubelet-port", type=int, default=10250,
                   help="the kubelet endpoint's port, advertised in every Node's daemonEndpoints (0: any free one)")
    p.add_argument("--kubelet-kubeconfig-dir", default=None, metavar="DIR",
                   help="each kubelet's own kubeconfig, DIR/<node>.kubeconfig (system:node:<node>); a node "
                        "without one acts with --kubeconfig")
    p.add_argument("-v", "--verbose", action="store_true", help="log at INFO (default WARNING)")
    return p


def own_clients(directory: str | None, shapes: list[pools.NodeShape], user_agent: str) -> dict[str, RestClient]:
    """The kubelets' own clients, from the kubeconfigs found in `directory` (one per node name)."""
    found: dict[str, RestClient] = {}
    for shape in shapes:
        path = os.path.join(directory, f"{shape.name}.kubeconfig") if directory else ""
        if path and os.path.exists(path):
            found[shape.name] = RestClient(kubeconfig.load(path), user_agent=user_agent)
    return found


async def _main(args: argparse.Namespace, shapes: list[pools.NodeShape], scale: float) -> int:
    gc.set_threshold(50_000, 100, 100)  # informer caches are big trees of dicts without cycles
    config = kubeconfig.load(args.kubeconfig, args.context)
    state_dir = args.state_dir or os.path.join(os.path.dirname(os.path.abspath(args.kubeconfig)), "nodes")
    stop = startup.stop_event()
    async with RestClient(config, user_agent=USER_AGENT) as client:
        if not await startup.wait_for_server(client, stop):
            return 0
        settings = NodeSettings(pods=Settings(grace_scale=scale))
        nodes = await host.start(client, shapes, state_dir=state_dir, address=args.address, port=args.kubelet_port,
                                 settings=settings,
                                 own_clients=own_clients(args.kubelet_kubeconfig_dir, shapes, USER_AGENT))
        log.info("%d nodes registered", len(shapes))
        try:
            await stop.wait()
        finally:
            await nodes.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        shapes, scale = flags.shape_from_args(args)
    except ValueError as exc:
        print(f"nodes: {exc}", file=sys.stderr)
        return 2
    return event_loop.run(_main(args, shapes, scale))


if __name__ == "__main__":
    sys.exit(main())
