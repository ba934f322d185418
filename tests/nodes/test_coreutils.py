"""The commands `nodes/coreutils.py` adds to the shell, and the shell features the e2e tests use."""

from __future__ import annotations

import gzip
import re

import pytest

from nodes import shell


@pytest.mark.parametrize("command, stdout, code", [
    ("seq 3", "1\n2\n3\n", 0),
    ("seq 2 2 7", "2\n4\n6\n", 0),
    ("seq x", "", 1),
    ("for i in $(seq 1 3); do echo n$i; done", "n1\nn2\nn3\n", 0),
    ("echo a; for w in x y; do echo $w; done; echo z", "a\nx\ny\nz\n", 0),
    ('echo "[$(echo inner)]"', "[inner]\n", 0),
    ("echo to-err >&2; echo to-out 2>&1", "to-out\n", 0),
    ("sleep 1; exit 3", "", 3),
], ids=["seq LAST", "seq FIRST INC LAST", "seq refuses a word", "for over a command substitution",
        "for between other commands", "substitution inside quotes", ">&2 reaches stderr", "exit after sleep"])
def test_scripts(command: str, stdout: str, code: int) -> None:
    result = shell.run(["/bin/sh", "-c", command])
    assert (result.stdout, result.exit_code) == (stdout, code)


def test_stderr_redirection_goes_to_stderr() -> None:
    assert shell.run("echo to-err >&2").stderr == "to-err\n"


def test_gzip_compresses_what_it_reads_to_the_same_bytes_gunzip_reads() -> None:
    out = shell.run('echo -n "This is a test string" | gzip').stdout.encode("utf-8", "surrogateescape")
    assert gzip.decompress(out) == b"This is a test string"


def test_date_and_uptime_print_one_busybox_line() -> None:
    assert re.fullmatch(r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d UTC \d{4}\n", shell.run("date").stdout)
    assert re.fullmatch(r" \d\d:\d\d:\d\d up .*,  0 users,  load average: 0.00, 0.00, 0.00\n", shell.run("uptime").stdout)
