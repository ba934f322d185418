"""The audit log file: one line per write, and lumberjack-style rotation by size and count."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from apiserver.audit import log_file
from apiserver.audit.log_file import LogFile


def test_a_full_file_is_rotated_and_only_maxbackup_backups_are_kept(tmp_path: Path) -> None:
    log = LogFile(str(tmp_path / "audit.log"), max_size_mb=1, max_backups=2)
    line = b"x" * (300 * 1024) + b"\n"
    for _ in range(12):  # three lines fit in 1 MiB: four files' worth
        log.write(line)
    backups = log.backups()
    log.close()
    assert len(backups) == 2
    assert all(Path(b).name.startswith("audit-") and b.endswith(".log") for b in backups)
    assert (tmp_path / "audit.log").read_bytes() == line * 3
    assert all(Path(b).read_bytes() == line * 3 for b in backups)


def test_without_maxsize_the_file_grows(tmp_path: Path) -> None:
    log = LogFile(str(tmp_path / "audit.log"))
    for _ in range(5):
        log.write(b"{}\n")
    log.close()
    assert (tmp_path / "audit.log").read_bytes() == b"{}\n" * 5 and LogFile(str(tmp_path / "a2.log")).backups() == []


def test_rotations_within_one_millisecond_keep_every_backup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frozen = datetime.datetime(2026, 12, 3, 12, 0, 0, 123000, tzinfo=datetime.timezone.utc)

    class Clock(datetime.datetime):
        @classmethod
        def now(cls, tz: Any = None) -> "Clock":  # type: ignore[override]
            return frozen  # type: ignore[return-value]

    monkeypatch.setattr(log_file.datetime, "datetime", Clock)  # every rotation in the same millisecond
    log = LogFile(str(tmp_path / "audit.log"), max_size_mb=1)
    lines = [bytes([ord("a") + i]) * (600 * 1024) + b"\n" for i in range(3)]
    for line in lines:
        log.write(line)
    backups = log.backups()
    log.close()
    assert [Path(b).name for b in backups] == ["audit-2026-12-03T12-00-00.123.log", "audit-2026-12-03T12-00-00.124.log"]
    assert [Path(b).read_bytes() for b in backups] == lines[:2]
