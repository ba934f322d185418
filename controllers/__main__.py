"""`python -m controllers --kubeconfig PATH`: run the built-in controllers as a co-process.

Connects with the kubeconfig (any cluster, not only haru), retries until the API server answers,
runs until SIGTERM or SIGINT and then stops cleanly (exit 0). A bad `--feature-gates` value
stops it first (exit 1, kube-controller-manager's text). `--use-service-account-credentials`
(kube-controller-manager's flag, off by default as there; kubeadm and haru turn it on) gives each
controller its own ServiceAccount token (`client_builder.py`). `cluster/supervisor.py` starts it
and restarts it if it crashes; `builtin.py` says which controllers run.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys

from client import flag_values, kubeconfig, startup
from client.rest import RestClient
from client import event_loop
from controllers import builtin, features as feature_gates


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m controllers", description="haru's built-in controllers")
    parser.add_argument("--kubeconfig", required=True, help="kubeconfig to reach the API server with")
    parser.add_argument("--context", default=None, help="kubeconfig context (default: current-context)")
    parser.add_argument("--controllers", default="*",
                        help="kube-controller-manager syntax: '*' for all, 'name' on, '-name' off "
                             f"(e.g. '*,-deployment'); names: {', '.join(builtin.NAMES)}")
    parser.add_argument("--workers", type=int, default=None,
                        help="concurrent reconciles per controller (default: kube-controller-manager's per controller)")
    parser.add_argument("--feature-gates", default="",
                        help="kube-controller-manager syntax, e.g. WorkloadWithJob=false")
    parser.add_argument("--use-service-account-credentials", type=flag_values.go_bool, nargs="?", const=True,
                        default=False, metavar="BOOL",
                        help="each controller acts as its own ServiceAccount kube-system/<controller> (default false)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO (default WARNING)")
    return parser


async def _main(args: argparse.Namespace) -> int:
    # Informer caches are large trees of JSON dicts without cycles; the default GC thresholds make
    # the initial list of 100k objects take seconds of collector time (see apiserver/runner.py).
    gc.set_threshold(50_000, 100, 100)
    try:
        gates = feature_gates.parse(args.feature_gates)
    except ValueError as exc:
        print(f'invalid argument "{args.feature_gates}" for "--feature-gates" flag: {exc}', file=sys.stderr)
        return 1
    config = kubeconfig.load(args.kubeconfig, args.context)
    try:
        only = builtin.select(args.controllers)
    except ValueError as exc:
        print(f'invalid argument "{args.controllers}" for "--controllers" flag: {exc}', file=sys.stderr)
        return 2
    stop = startup.stop_event()
    async with RestClient(config, user_agent="haru-controllers/0.1") as client:
        if not await startup.wait_for_server(client, stop):
            return 0
        await builtin.run(client, stop, only, workers=args.workers, features=gates,
                          service_account_credentials=args.use_service_account_credentials)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return event_loop.run(_main(args))


if __name__ == "__main__":
    sys.exit(main())
