"""The live progress of a run, on the terminal the CLI writes to (a `runner.Listener`).

On a TTY one line is rewritten in place: `[37/212] passed 35 failed 1 skipped 1 — <current check>`,
and each failure is printed above it as it happens. Anywhere else (CI logs, a pipe) every result
is one plain line: outcome, seconds, name, and for a failure or skip its reason. Called by `cli`.
"""

from __future__ import annotations

import shutil
from typing import TextIO

from conformance import runner
from conformance.registry import Check


class Progress:
    def __init__(self, total: int, out: TextIO, *, tty: bool | None = None) -> None:
        self.total = total
        self.out = out
        self.tty = out.isatty() if tty is None else tty
        self.counts = {runner.PASSED: 0, runner.FAILED: 0, runner.SKIPPED: 0}
        self.running: list[str] = []

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    def started(self, check: Check) -> None:
        self.running.append(check.name)
        self._redraw()

    def finished(self, result: runner.Result) -> None:
        self.counts[result.outcome] += 1
        if result.check.name in self.running:
            self.running.remove(result.check.name)
        if self.tty:
            if result.outcome == runner.FAILED:
                self._clear()
                self.out.write(f"FAILED  {result.check.name}\n        {result.message}\n")
            self._redraw()
        else:
            reason = f"  ({result.message})" if result.message else ""
            self.out.write(f"{result.outcome:8} {result.seconds:6.2f}s  {result.check.name}{reason}\n")
        self.out.flush()

    def close(self) -> None:
        if self.tty:
            self._clear()
            self.out.flush()

    def line(self) -> str:
        current = self.running[0] if self.running else ""
        return (f"[{self.done}/{self.total}] passed {self.counts[runner.PASSED]} failed {self.counts[runner.FAILED]} "
                f"skipped {self.counts[runner.SKIPPED]}" + (f" — {current}" if current else ""))

    def _redraw(self) -> None:
        if not self.tty:
            return
        width = shutil.get_terminal_size((100, 20)).columns - 1
        text = self.line()
        self.out.write("\r\x1b[2K" + (text if len(text) <= width else text[: width - 1] + "…"))
        self.out.flush()

    def _clear(self) -> None:
        self.out.write("\r\x1b[2K")
