"""What every benchmark's printed report shares: the machine facts, value formats, Markdown tables.

`bench.storage` prints `machine_facts` and builds its rows in `_storage_table.py`; `bench.apiserver`
prints its own table through `markdown_table` (`_api_report.py`). Each table decides its verdicts in
one place, never in the case that measured them.
"""

from __future__ import annotations

import math
import os
import platform
import sys


def format_value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if math.isnan(value):
        return "n/a"
    if unit == "us":
        return f"{value:,.1f} us" if value < 100 else f"{value:,.0f} us"
    if unit == "ms":
        return f"{value:,.2f} ms" if value < 10 else f"{value:,.1f} ms"
    if unit == "ops/s":
        return f"{value:,.0f} ops/s"
    return f"{value:,.3g} {unit}"


def machine_facts(etcd_version: str | None) -> list[str]:
    load = os.getloadavg()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    facts = [
        f"nproc: {cpus}    load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        f"python: {platform.python_implementation()} {sys.version.split()[0]} on {platform.machine()}",
        f"etcd: {etcd_version or 'not run (--haru-only)'}",
    ]
    try:
        import lmdb

        facts.append(f"lmdb: py-lmdb {lmdb.__version__}, liblmdb {'.'.join(map(str, lmdb.version()))}")
    except ImportError:  # pragma: no cover - lmdb is a hard dependency of storage/
        pass
    return facts


def markdown_table(header: list[str], lines: list[list[str]]) -> str:
    """A Markdown table with padded columns (shared by every benchmark's report)."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *lines)]

    def fmt(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"

    out = [fmt(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [fmt(line) for line in lines]
    return "\n".join(out)
