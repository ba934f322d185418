"""Per-kind table printers, one module per area, keyed by (API group, resource).

`by_resource()` is the registry `apiserver/tables.py` consults: every module here exports a
`PRINTERS` dict of `Printer`s (see `printer.py`), shared by all versions of a kind as upstream's
handlers are. Kinds missing here get the API server's default Name/Created At table.
"""

from __future__ import annotations

import functools

from apiserver.printers import access, core, events, networking, platform, pods, scheduling, storage, workloads
from apiserver.printers.printer import Printer


@functools.cache
def by_resource() -> dict[tuple[str, str], Printer]:
    registry: dict[tuple[str, str], Printer] = {}
    for module in (pods, core, events, workloads, networking, storage, access, scheduling, platform):
        registry.update(module.PRINTERS)
    return registry
