"""Crash test with a real process: SIGKILL a writing child many times; after each reopen every
acknowledged write is there, revisions are gap-free and monotonic, and the object database and
the event log agree (no write is half-applied)."""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import lmdb
import msgspec
import pytest

from storage import layout

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 24
TYPE_OF_OP = {"create": "ADDED", "update": "MODIFIED", "delete": "DELETED"}


def run_child_and_kill(path: Path, seed: int, rng: random.Random) -> tuple[int, list[str]]:
    """Start the writer, kill it with SIGKILL at a random moment; return (start revision, acks)."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.storage.crash_writer", str(path), str(seed)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        ready = child.stdout.readline().decode()
        assert ready.startswith("ready "), (ready, child.stderr.read().decode() if child.stderr else "")
        start_revision = int(ready.split()[1])
        # Let it write for a random while, reading its output so the pipe never fills.
        chunks: list[bytes] = []
        deadline = time.monotonic() + rng.uniform(0.05, 0.45)
        fd = child.stdout.fileno()
        while (left := deadline - time.monotonic()) > 0:
            if select.select([fd], [], [], left)[0]:
                chunks.append(os.read(fd, 1 << 16))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        chunks.append(child.stdout.read())
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    assert child.returncode == -signal.SIGKILL, "the writer died on its own"
    lines = b"".join(chunks).decode().split("\n")
    # The last line may be cut off by the kill; only whole lines are acknowledgements.
    acks = lines[:-1]
    assert not any(line.startswith("error") for line in acks), acks
    return start_revision, acks


def check_store(path: Path) -> tuple[int, dict[int, layout.LogEntry]]:
    """Open the env directly (as the store would) and check its invariants; return (revision, log)."""
    env = lmdb.open(str(path), max_dbs=4, readonly=False)
    try:
        dbs = layout.open_databases(env)
        with env.begin() as txn:
            revision = layout.read_meta(txn, dbs, layout.META_REVISION)
            compacted = layout.read_meta(txn, dbs, layout.META_COMPACTED)
            log = {
                layout.unpack_u64(k): layout.unpack_log_entry(layout.unpack_u64(k), v)
                for k, v in txn.cursor(db=dbs.log)
            }
            objects = {
                k.decode(): layout.unpack_object(k.decode(), v) for k, v in txn.cursor(db=dbs.objects)
            }
            uids = {k.decode(): v.decode() for k, v in txn.cursor(db=dbs.uids)}
    finally:
        env.close()

    # Gap-free log from the compaction mark to the revision counter.
    assert sorted(log) == list(range(compacted + 1, revision + 1))
    # Replaying the log over what compaction left must give exactly the objects database.
    last_event: dict[str, layout.LogEntry] = {}
    for rev in sorted(log):
        entry = log[rev]
        assert msgspec.json.decode(entry.value)["metadata"]["resourceVersion"] == str(rev)
        last_event[entry.key] = entry
    for key, entry in last_event.items():
        if entry.type == "DELETED":
            assert key not in objects, f"{key} deleted at {entry.revision} but still stored"
        else:
            record = objects.get(key)
            assert record is not None, f"{key} written at {entry.revision} but missing"
            assert (record.value, record.revision) == (entry.value, entry.revision)
    # The uid index holds exactly the uids of the stored objects.
    assert uids == {key: layout.uid_of_json(record.value) for key, record in objects.items()}
    for key, record in objects.items():
        if key not in last_event:
            assert record.revision <= compacted
        value = msgspec.json.decode(record.value)
        assert value["metadata"]["resourceVersion"] == str(record.revision)
    return revision, log


@pytest.mark.slow
def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "crash-db"
    rng = random.Random(20260529)
    previous_revision = 0
    total_acks = 0
    started = time.monotonic()
    for round_ in range(ROUNDS):
        start_revision, acks = run_child_and_kill(path, round_, rng)
        assert start_revision == previous_revision
        revision, log = check_store(path)
        assert revision >= previous_revision

        acked_revisions = []
        for line in acks:
            op, rev_text, key = line.split(" ", 2)
            rev = int(rev_text)
            acked_revisions.append(rev)
            assert previous_revision < rev <= revision, f"ack {line!r} not durable (at {revision})"
            if rev in log:  # still in the (retained) log: it must be exactly this write
                assert (log[rev].key, log[rev].type) == (key, TYPE_OF_OP[op])
        assert len(set(acked_revisions)) == len(acked_revisions)
        total_acks += len(acks)
        previous_revision = revision
    assert total_acks > ROUNDS * 10, "the writer barely wrote; the test proved little"
    assert time.monotonic() - started < 60
