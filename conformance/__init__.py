"""A conformance-style suite for Kubernetes 1.36 that runs against any kubeconfig (`haru conformance`).

Layers, top to bottom:
- `cli` parses `haru conformance` / `python -m conformance` flags and calls the runner;
- `runner` picks checks (focus, skip, gates), runs each in its own namespace, collects `Result`s;
- `context` is what one check sees: a recording API client, its namespace, cleanup, polling;
- `registry` holds the checks as data (name, area, kind, KEP, gates) and loads `checks/`;
- `checks/` has one module per area; every check is an `async def` taking a `Context`.

Like the co-processes, the suite reaches the cluster only over HTTP through `client/`, so it runs
the same against haru and against a real cluster.
"""
