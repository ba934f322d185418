"""A small async Kubernetes client for haru's own components, shaped like client-go's chain.

`kubeconfig` → `rest.RestClient` (one HTTP call per method, errors as `errors.APIError`) →
`listwatch.ListWatch` (one collection) → `reflector.Reflector` (list, then watch; relist on 410)
→ `informer.Informer` (a `cache.Store` kept current, plus handlers) → `workqueue.WorkQueue`.
`discovery` finds resources; `testing` holds a fake list/watch source. It imports nothing of ours,
so the scheduler, nodes and controllers can point it at any cluster (ARCHITECTURE.md, principle 1).
"""
