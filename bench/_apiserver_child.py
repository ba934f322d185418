"""The API server alone, as a child process: `python -m bench._apiserver_child DATA_DIR`.

Issue #3's rows measure the API server, so `bench.apiserver` runs it without the co-processes
that `haru up` adds (the controllers would LIST and watch every resource at start and share the
two cores). It calls `apiserver.runner.start` exactly as `haru up --http` does (plain HTTP, any
caller is the admin; `bench.apf` turns APF off in one of its servers; `bench.rbac` adds `--admin-token T --authorization-mode M` so callers are who
their bearer token says, as over HTTPS; `bench.audit` adds the audit-log flags), prints `haru apiserver is serving URL; ` once it listens, and stops cleanly
on SIGTERM. Started and stopped by `bench._server_process`.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from apiserver import runner
from apiserver.audit import options as audit_options
from client import event_loop
from cluster import cli


async def serve(data_dir: str, admin_token: str | None = None, authorization_mode: str | None = None,
                feature_gates: str = "", priority_and_fairness: bool = True,
                audit: audit_options.Options | None = None) -> None:
    running = await runner.start(data_dir, port=0, admin_token=admin_token, authorization_mode=authorization_mode,
                                 feature_gates=feature_gates, priority_and_fairness=priority_and_fairness, audit=audit)
    cli._tune_gc()  # the same collector settings as `haru up`
    print(f"haru apiserver is serving {running.url}; ", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await running.stop()


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench._apiserver_child")
    parser.add_argument("data_dir")
    parser.add_argument("--admin-token", default=None)
    parser.add_argument("--authorization-mode", default=None)
    parser.add_argument("--feature-gates", default="", help="as haru up's (bench.gang --through-api: GenericWorkload)")
    parser.add_argument("--enable-priority-and-fairness", default="true", choices=("true", "false"),
                        help="as haru up's (bench.apf runs one server with it off)")
    parser.add_argument("--audit-log-path", default="", help="as haru up's (bench.audit)")
    parser.add_argument("--audit-policy-file", default="", help="as haru up's (bench.audit)")
    args = parser.parse_args()
    audit = audit_options.Options(log_path=args.audit_log_path, policy_file=args.audit_policy_file)
    event_loop.run(serve(args.data_dir, args.admin_token, args.authorization_mode, args.feature_gates,
                         args.enable_priority_and_fairness == "true", audit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
