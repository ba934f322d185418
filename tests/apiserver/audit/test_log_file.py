"""The audit log file: one line per write, and lumberjack-style rotation by size and count."""

from __future__ import annotations

from pathlib import Path

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
