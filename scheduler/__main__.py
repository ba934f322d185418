"""`python -m scheduler --kubeconfig PATH`: run the scheduler as a co-process.

Connects with the kubeconfig (any cluster, not only haru: `--scheduler-name` picks which pods are
ours), serves /healthz, /livez, /readyz and /metrics on `--bind-address`:`--secure-port` (plain
HTTP here, HTTPS upstream; port 0 picks a free one, logged), waits for the API server, schedules until SIGTERM or SIGINT and then stops cleanly (exit 0).
A bad `--feature-gates` value or a bad `--config` file stops it before it connects, with the
reason on stderr (exit 1). `cluster/supervisor.py` starts it and restarts it if it crashes.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys

from client import event_loop, kubeconfig, startup
from client.rest import RestClient
from scheduler import default_profile, features as feature_gates, serving
from scheduler.scheduler import Scheduler

USER_AGENT = "haru-scheduler/0.1"
log = logging.getLogger("haru.scheduler")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m scheduler", description="haru's scheduler")
    parser.add_argument("--kubeconfig", required=True, help="kubeconfig to reach the API server with")
    parser.add_argument("--context", default=None, help="kubeconfig context (default: current-context)")
    parser.add_argument("--config", default=None, help="a KubeSchedulerConfiguration file")
    parser.add_argument("--scheduler-name", default=None,
                        help="the schedulerName of the (first) profile (default: default-scheduler)")
    parser.add_argument("--record-results", action="store_true",
                        help="write each attempt's filter and score results to the pod's annotations")
    parser.add_argument("--feature-gates", default="", help="kube-scheduler syntax, e.g. GangScheduling=false")
    parser.add_argument("--bind-address", default="127.0.0.1",
                        help="the address /healthz and /metrics listen on (default 127.0.0.1)")
    parser.add_argument("--secure-port", type=int, default=10259,
                        help="the port /healthz and /metrics listen on, plain HTTP in haru (0: a free port)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO (default WARNING)")
    return parser


def observer_for(client: RestClient) -> object:
    """The `--record-results` observer (scheduler/record_results.py); ValueError if this build lacks it."""
    try:
        from scheduler import record_results  # type: ignore[attr-defined]
    except ImportError:
        raise ValueError("--record-results: this build has no result recorder (scheduler/record_results.py)") from None
    return record_results.new(client)  # type: ignore[no-any-return]


async def _main(args: argparse.Namespace, gates: dict[str, bool], config: object) -> int:
    # Informer caches are big acyclic trees (see controllers/__main__.py), and a pod's cycle state
    # lives until it is bound, so most young objects a collection scans survive it: at 50,000 each
    # gen-0 pass took ~75 ms (33 of them, 2.5 s, in bench.scheduler --mid's claims workload) and
    # one gen-1 pass 3.6 s. At 200,000 more of them die before a scan: 3 passes, 0.55 s. Garbage
    # cycles are still collected, a little later.
    gc.set_threshold(200_000, 250, 100)
    stop = startup.stop_event()
    async with RestClient(kubeconfig.load(args.kubeconfig, args.context), user_agent=USER_AGENT) as client:
        if not await startup.wait_for_server(client, stop):
            return 0
        try:
            observer = observer_for(client) if args.record_results else None
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 1
        sched = Scheduler(client, config, gates, observer=observer)  # type: ignore[arg-type]
        try:
            runner, port = await serving.start(sched, args.bind_address, args.secure_port)
        except OSError as exc:
            print(f"failed to create listener: {exc}", file=sys.stderr)
            return 1
        log.info("Serving insecurely on %s:%d", args.bind_address, port)
        try:
            await sched.run(stop)
        finally:
            await runner.cleanup()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        gates = feature_gates.parse(args.feature_gates)
    except ValueError as exc:
        print(f'invalid argument "{args.feature_gates}" for "--feature-gates" flag: {exc}', file=sys.stderr)
        return 1
    try:
        config = default_profile.load_config(args.config, gates, args.scheduler_name)
    except Exception as exc:  # noqa: BLE001 - any config error stops the start, with its text
        print(f"couldn't create scheduler: {exc}" if not str(exc).startswith("couldn't") else str(exc),
              file=sys.stderr)
        return 1
    return event_loop.run(_main(args, gates, config))


if __name__ == "__main__":
    sys.exit(main())
