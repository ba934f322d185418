"""The checks, one module per area (`apimachinery_watch.py`, `apps_deployment.py`, `dra_allocation.py`, …).

Each module only imports `conformance.registry` (the decorators), `conformance.context` (the types)
and `client/`; `registry.all_checks()` imports them all.
"""
