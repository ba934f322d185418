"""The printed result of `python -m bench.storage`: haru, etcd and the floor side by side.

`bench._storage_rows` builds one `Row` per case: each side's figure, the targets it is judged
against (a ratio to etcd, a ratio to the bare py-lmdb floor, or a limit on haru's own figure),
and the CPU each process used (`bench._cpu`). Whether a row passes is computed here, once, so no
case decides its own verdict; a missed target is a FAIL in the table, never an exception, and a
target whose side did not run is n/a, with the reason in that side's column.
`bench.storage` prints the table with `print_report`, after `bench._report.machine_facts`.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

from bench._cpu import CpuUse
from bench._report import format_value, markdown_table


@dataclass
class Row:
    """One case. Figures are in `unit`; `higher_is_better` orients every ratio.

    A ratio reads "haru is N times as good as that side": 2.0 vs etcd on a latency means half
    etcd's latency. `etcd_target` and `floor_target` are the least ratio each must reach; `limit`
    bounds haru's own figure (a p99 of at most 50 ms). `etcd_missing` says why etcd has no figure.
    """

    case: str
    unit: str
    haru: float
    etcd: float | None = None
    floor: float | None = None
    higher_is_better: bool = True
    etcd_target: float | None = None
    floor_target: float | None = None
    limit: float | None = None
    limit_label: str = ""
    etcd_missing: str = ""
    etcd_label: str = ""  # e.g. "100 watchers" where etcd ran a smaller case
    etcd_comparable: bool = True  # False: etcd's figure is context, so no ratio is printed
    cpu: dict[str, CpuUse] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def ratio_to(self, other: float | None) -> float | None:
        if other is None or math.isnan(other) or math.isnan(self.haru):
            return None
        if self.higher_is_better:
            return self.haru / other if other else math.inf
        return other / self.haru if self.haru else math.inf

    @property
    def target(self) -> str:
        parts = []
        if self.etcd_target is not None:
            parts.append(f">= {self.etcd_target:g}x etcd")
        if self.floor_target is not None:
            parts.append(f">= {self.floor_target:g}x floor")
        if self.limit is not None:
            parts.append(self.limit_label or f"<= {format_value(self.limit, self.unit)}")
        return " and ".join(parts) or "-"

    def checks(self) -> list[tuple[str, str]]:
        """(target, "pass" | "FAIL" | "n/a") for each target of the row."""
        found = []
        for name, other, least in (("etcd", self.etcd, self.etcd_target), ("floor", self.floor, self.floor_target)):
            if least is None:
                continue
            ratio = self.ratio_to(other)
            found.append((name, "n/a" if ratio is None else "pass" if ratio >= least else "FAIL"))
        if self.limit is not None:
            ok = self.haru >= self.limit if self.higher_is_better else self.haru <= self.limit
            found.append(("limit", "pass" if ok else "FAIL"))
        return found

    @property
    def verdict(self) -> str:
        if math.isnan(self.haru):
            return "FAIL (no figure)"
        checks = self.checks()
        failed = [name for name, state in checks if state == "FAIL"]
        missing = [name for name, state in checks if state == "n/a"]
        if failed:
            return f"FAIL ({', '.join(failed)})" if len(checks) > 1 else "FAIL"
        if missing and len(missing) == len(checks):
            return f"n/a (no {', '.join(missing)})"
        if missing:
            return f"pass (no {', '.join(missing)} to judge)"
        return "pass"

    def etcd_cell(self) -> str:
        if self.etcd is None:
            return self.etcd_missing or "-"
        cell = format_value(self.etcd, self.unit)
        return f"{cell} ({self.etcd_label})" if self.etcd_label else cell

    def cpu_cell(self) -> str:
        return " / ".join(self.cpu[side].describe() if side in self.cpu else "-" for side in ("haru", "etcd", "floor"))


def _ratio_cell(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:,.2f}x"


def render_table(rows: list[Row]) -> str:
    header = ["case", "haru", "etcd", "floor", "vs etcd", "vs floor", "target", "pass/fail",
              "CPU s: haru / etcd srv+client / floor"]
    lines = [[
        row.case,
        format_value(row.haru, row.unit),
        row.etcd_cell(),
        format_value(row.floor, row.unit),
        _ratio_cell(row.ratio_to(row.etcd) if row.etcd_comparable else None),
        _ratio_cell(row.ratio_to(row.floor)),
        row.target,
        row.verdict,
        row.cpu_cell(),
    ] for row in rows]
    return markdown_table(header, lines)


def print_report(rows: list[Row]) -> None:
    print()
    print(render_table(rows))
    print()
    print("vs etcd, vs floor: how many times haru's figure is as good as that side's (higher is "
          "better for haru); floor: bare py-lmdb doing the same case (bench/_floor_side.py)")
    for row in rows:
        for note in row.notes:
            print(f"  {row.case}: {note}")
        for side, use in row.cpu.items():
            who = "etcd server + this process (aetcd client)" if use.server is not None else "this process"
            print(f"  {row.case}: CPU {side}: {use.describe()} s ({who}) over {use.wall:.2f} s, "
                  f"{use.cores():.2f} cores busy")
    sys.stdout.flush()
