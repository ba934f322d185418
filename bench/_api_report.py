"""The printed table of `bench.apiserver`: case | haru | target | anchor | ratio / pass.

Each case builds one `Row` holding its `Figure`s (a value with the limit it is held to) and the
anchor it is compared with. Whether a row passes and how it compares with its anchor are computed
here, once, so no case decides its own verdict. A missed target is a FAIL in the table, never an
exception; a figure that could not be measured is NaN and shows as "FAIL (no figure)".
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

from bench._report import markdown_table


@dataclass(frozen=True)
class Figure:
    """One measured number and the limit it must meet (None: shown, not judged)."""

    label: str  # "" for the headline figure, else e.g. "p99"
    value: float
    unit: str
    limit: float | None = None
    higher_is_better: bool = True

    @property
    def ok(self) -> bool | None:
        if self.limit is None:
            return None
        if math.isnan(self.value):
            return False
        return self.value >= self.limit if self.higher_is_better else self.value <= self.limit

    def target(self) -> str:
        if self.limit is None:
            return ""
        sign = ">=" if self.higher_is_better else "<="
        prefix = f"{self.label} " if self.label else ""
        return f"{prefix}{sign} {format_value(self.limit, self.unit)}"

    def shown(self) -> str:
        prefix = f"{self.label} " if self.label else ""
        return prefix + format_value(self.value, self.unit)


@dataclass
class Row:
    """One case. `anchor_value` is in the unit of `figures[0]`, so the two give the ratio."""

    case: str
    figures: list[Figure]
    anchor: str
    anchor_value: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        """How many times better than the anchor haru's headline figure is (>1: better)."""
        if self.anchor_value is None or not self.figures:
            return None
        head = self.figures[0]
        if math.isnan(head.value) or math.isnan(self.anchor_value) or head.value <= 0 or self.anchor_value <= 0:
            return None
        return head.value / self.anchor_value if head.higher_is_better else self.anchor_value / head.value

    @property
    def verdict(self) -> str:
        figures = self.figures
        if not figures or all(math.isnan(f.value) for f in figures) or any(
                math.isnan(f.value) for f in figures if f.limit is not None):
            return "FAIL (no figure)"
        judged = [f.ok for f in self.figures if f.ok is not None]
        if not judged:
            return "-"
        return "pass" if all(judged) else "FAIL"


def format_value(value: float, unit: str) -> str:
    if math.isnan(value):
        return "n/a"
    if unit == "ms":
        return f"{value:,.2f} ms" if value < 10 else f"{value:,.1f} ms" if value < 1000 else f"{value:,.0f} ms"
    if unit == "s":
        return f"{value:,.2f} s"
    if unit == "MB":
        return f"{value:,.0f} MB"
    if unit in ("req/s", "creates/s"):
        return f"{value:,.0f} {unit}"
    return f"{value:,.3g} {unit}"


def render_table(rows: list[Row]) -> str:
    header = ["case", "haru", "target", "anchor", "ratio / pass"]
    lines = []
    for row in rows:
        ratio = row.ratio
        lines.append([
            row.case,
            "; ".join(f.shown() for f in row.figures),
            " and ".join(t for t in (f.target() for f in row.figures) if t) or "-",
            row.anchor,
            ("-" if ratio is None else f"{ratio:,.2f}x") + " / " + row.verdict,
        ])
    return markdown_table(header, lines)


def print_report(rows: list[Row]) -> None:
    print()
    print(render_table(rows))
    print()
    print("ratio: haru's headline figure against the anchor's, oriented so that >1 means haru is better.")
    for row in rows:
        if row.notes:
            print(f"{row.case}:")
        for note in row.notes:
            print(f"  - {note}")
    sys.stdout.flush()
