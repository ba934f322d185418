"""haru's built-in controllers, each an ordinary API client (ARCHITECTURE.md, principle 1).

A controller is a `watches` list and `async def reconcile(key)` (`reconciling.py`); `manager.py`
runs them: shared informers, one work queue per controller, workers with backoff. The controllers
themselves: `namespace.py` (namespaces that finish deleting), `garbage_collector.py`
(ownerReferences), `replica_set.py`, `deployment.py`, `stateful_set.py` and `daemon_set.py`
(workloads), `volume_binder.py` (claims to volumes), `horizontal_pod_autoscaler.py` (replicas from
metrics), and the others `builtin.py` lists;
`python -m controllers` runs them against a kubeconfig.
"""
