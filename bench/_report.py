"""The printed result of a benchmark run: machine facts, then one table, then the details.

`bench.storage` builds one `Row` per case and calls `print_report`. A row carries both sides'
figures, which way the ratio points, and the target; whether it passes is computed here, once,
so no case decides its own verdict. A missed target is a FAIL in the table, never an exception.
"""

from __future__ import annotations

import math
import os
import platform
import sys
from dataclasses import dataclass, field


@dataclass
class Row:
    """One case. `haru`/`etcd` are numbers in `unit`; `higher_is_better` orients the ratio.

    Ratio targets compare the two sides (`ratio_target`, e.g. 1.5 means "at least 1.5x etcd");
    absolute targets (`limit`) compare haru's figure alone, e.g. a p99 of at most 50 ms.
    """

    case: str
    unit: str
    haru: float
    etcd: float | None = None
    higher_is_better: bool = True
    ratio_target: float | None = None
    limit: float | None = None
    limit_label: str = ""
    etcd_label: str = ""
    show_ratio: bool = True  # False where etcd's figure is shown for context only
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        if not self.show_ratio or self.etcd is None or math.isnan(self.etcd) or math.isnan(self.haru):
            return None
        if self.higher_is_better:
            return self.haru / self.etcd if self.etcd else math.inf
        return self.etcd / self.haru if self.haru else math.inf

    @property
    def target(self) -> str:
        if self.ratio_target is not None:
            return f">= {self.ratio_target:g}x etcd"
        if self.limit_label:
            return self.limit_label
        return "-"

    @property
    def verdict(self) -> str:
        if math.isnan(self.haru):
            return "FAIL (no figure)"
        if self.ratio_target is not None:
            ratio = self.ratio
            if ratio is None:
                return "n/a (no anchor)"
            return "pass" if ratio >= self.ratio_target else "FAIL"
        if self.limit is not None:
            ok = self.haru >= self.limit if self.higher_is_better else self.haru <= self.limit
            return "pass" if ok else "FAIL"
        return "-"


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


def render_table(rows: list[Row]) -> str:
    header = ["case", "haru", "etcd", "ratio", "target", "pass/fail"]
    lines = []
    for row in rows:
        ratio = row.ratio
        etcd_cell = format_value(row.etcd, row.unit)
        if row.etcd_label and row.etcd is not None:
            etcd_cell += f" ({row.etcd_label})"
        lines.append([
            row.case,
            format_value(row.haru, row.unit),
            etcd_cell,
            "-" if ratio is None else f"{ratio:,.1f}x",
            row.target,
            row.verdict,
        ])
    return markdown_table(header, lines)


def markdown_table(header: list[str], lines: list[list[str]]) -> str:
    """A Markdown table with padded columns (shared by every benchmark's report)."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *lines)]

    def fmt(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"

    out = [fmt(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [fmt(line) for line in lines]
    return "\n".join(out)


def print_report(rows: list[Row]) -> None:
    print()
    print(render_table(rows))
    print()
    for row in rows:
        for note in row.notes:
            print(f"  {row.case}: {note}")
    sys.stdout.flush()
