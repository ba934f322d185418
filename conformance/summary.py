"""Counts as tables: a run's passed / failed / skipped by area and by kind, and the registry's
checks by area and kind (the table `--list` prints and the README carries).

`results_table` is what the CLI prints after a run; `registry_markdown` is the Markdown the lead
pastes into README.md (tests/conformance/test_readme_table.py keeps the two equal).
"""

from __future__ import annotations

from collections import Counter

from conformance import runner
from conformance.registry import CONFORMANCE, FEATURE, Check

_OUTCOMES = (runner.PASSED, runner.FAILED, runner.SKIPPED)


def results_table(results: list[runner.Result]) -> str:
    """Plain-text table: one row per area, then one per kind, then the total."""
    by_area: dict[str, Counter[str]] = {}
    by_kind: dict[str, Counter[str]] = {}
    for result in results:
        by_area.setdefault(result.check.area, Counter())[result.outcome] += 1
        by_kind.setdefault(result.check.kind, Counter())[result.outcome] += 1
    total = Counter(r.outcome for r in results)
    rows = [("area", *_OUTCOMES)]
    rows += [(area, *(str(c[o]) for o in _OUTCOMES)) for area, c in sorted(by_area.items())]
    rows.append(("", "", "", ""))
    rows += [(f"kind: {kind}", *(str(c[o]) for o in _OUTCOMES)) for kind, c in sorted(by_kind.items())]
    rows.append(("total", *(str(total[o]) for o in _OUTCOMES)))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in
                               enumerate(zip(row, widths))).rstrip() for row in rows)


def registry_markdown(checks: list[Check]) -> str:
    """| area | upstream conformance | 1.36 feature | total |, one row per area and a total row."""
    counts: dict[str, Counter[str]] = {}
    for check in checks:
        counts.setdefault(check.area, Counter())[check.kind] += 1
    lines = ["| area | upstream conformance | 1.36 feature | total |", "| --- | ---: | ---: | ---: |"]
    for area, c in sorted(counts.items()):
        lines.append(f"| {area} | {c[CONFORMANCE]} | {c[FEATURE]} | {c[CONFORMANCE] + c[FEATURE]} |")
    conf = sum(c[CONFORMANCE] for c in counts.values())
    feat = sum(c[FEATURE] for c in counts.values())
    lines.append(f"| **total** | **{conf}** | **{feat}** | **{conf + feat}** |")
    return "\n".join(lines)


def listing(checks: list[Check]) -> str:
    """One line per check: kind, area, name with its KEP and gates."""
    return "\n".join(f"{c.kind:11} {c.area:16} {c.name}{' ' + c.tags if c.tags else ''}" for c in checks)
