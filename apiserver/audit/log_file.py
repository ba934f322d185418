"""`--audit-log-path`: events appended as JSON lines to a file, or to stdout for "-".

Rotation as lumberjack (the library kube-apiserver's log backend uses) does it: before a write
that would take the file past `max_size_mb`, it is renamed to `<name>-<UTC time>.<ext>`
(`audit-2006-01-02T15-04-05.000.log`) and a new one is started; then backups beyond
`max_backups` (0: keep all) or older than `max_age_days` (0: keep all) are removed.

Lines are gathered and written together, one `write` per batch, on the next loop turn after
FLUSH_DELAY seconds (or at once past FLUSH_BYTES, and at close): a syscall per event would cost
more than the event. A batch holds whole lines only, so a reader never sees half an event; a crash
loses at most the last FLUSH_DELAY of them (upstream's batch mode trades the same way).
"""

from __future__ import annotations

import asyncio
import datetime
import os
import sys
import time
from typing import BinaryIO

FLUSH_DELAY = 0.02
FLUSH_BYTES = 256 * 1024


class LogFile:
    def __init__(self, path: str, max_size_mb: int = 0, max_backups: int = 0, max_age_days: int = 0) -> None:
        self.path = path
        self.max_bytes = max_size_mb * 1024 * 1024
        self.max_backups = max_backups
        self.max_age_days = max_age_days
        self._out: BinaryIO
        if path == "-":
            self._out = sys.stdout.buffer
            self._size = 0
        else:
            directory = os.path.dirname(os.path.abspath(path))
            os.makedirs(directory, exist_ok=True)
            self._out = open(path, "ab", buffering=0)  # noqa: SIM115 - kept open for the server's life
            self._size = self._out.tell()
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._timer: asyncio.TimerHandle | None = None

    def write(self, line: bytes) -> None:
        """Queue one whole line; it reaches the file within FLUSH_DELAY seconds."""
        self._pending.append(line)
        self._pending_bytes += len(line)
        if self._pending_bytes >= FLUSH_BYTES:
            self.flush()
        elif self._timer is None:
            try:
                self._timer = asyncio.get_running_loop().call_later(FLUSH_DELAY, self.flush)
            except RuntimeError:  # no loop (a tool, a test): write through
                self.flush()

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        lines, self._pending, self._pending_bytes = self._pending, [], 0
        chunk: list[bytes] = []
        for line in lines:
            if self.max_bytes and self.path != "-" and self._size and self._size + len(line) > self.max_bytes:
                self._out.write(b"".join(chunk))
                chunk = []
                self._rotate()
            chunk.append(line)
            self._size += len(line)
        if chunk:
            self._out.write(b"".join(chunk))
        if self.path == "-":
            self._out.flush()

    def close(self) -> None:
        self.flush()
        if self.path != "-":
            self._out.close()

    def _rotate(self) -> None:
        self._out.close()
        base, ext = os.path.splitext(self.path)
        now = datetime.datetime.now(datetime.timezone.utc)
        target = _backup_name(base, ext, now)
        while os.path.exists(target):
            # Two rotations within one millisecond: the next free millisecond, so a backup is never
            # overwritten (the names keep sorting by time).
            now += datetime.timedelta(milliseconds=1)
            target = _backup_name(base, ext, now)
        os.replace(self.path, target)
        self._out = open(self.path, "ab", buffering=0)  # noqa: SIM115
        self._size = 0
        self._prune(base, ext)

    def backups(self) -> list[str]:
        """The rotated files, oldest first (their names sort by time)."""
        base, ext = os.path.splitext(self.path)
        directory, prefix = os.path.split(base)
        names = sorted(n for n in os.listdir(directory or ".")
                       if n.startswith(prefix + "-") and n.endswith(ext) and n != os.path.basename(self.path))
        return [os.path.join(directory, n) for n in names]

    def _prune(self, base: str, ext: str) -> None:
        backups = self.backups()
        doomed = set()
        if self.max_backups and len(backups) > self.max_backups:
            doomed.update(backups[:len(backups) - self.max_backups])
        if self.max_age_days:
            cutoff = time.time() - self.max_age_days * 86400
            doomed.update(b for b in backups if os.path.getmtime(b) < cutoff)
        for path in doomed:
            try:
                os.remove(path)
            except FileNotFoundError:
                pass


def _backup_name(base: str, ext: str, when: datetime.datetime) -> str:
    return f"{base}-{when.strftime('%Y-%m-%dT%H-%M-%S.%f')[:-3]}{ext}"
