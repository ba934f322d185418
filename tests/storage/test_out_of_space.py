"""Out of space: the map grows on MapFullError; a full disk or a map that may not grow fails the
batch cleanly (StorageUnavailable, nothing half-written), reads keep working, later writes work."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from storage import Retention, Store, errors
from tests.storage.conftest import OpenStore
from tests.storage.samples import pod, pod_key

BIG = "x" * 3000  # a field that makes each object a few KB


def big_pod(name: str) -> dict:
    return pod(name, data={"blob": BIG})


async def test_the_map_grows_when_full(open_store: OpenStore) -> None:
    store = await open_store(map_size=1 << 20)
    for start in range(0, 400, 40):  # ~400 × (object + log entry) ≈ 5 MB through a 1 MiB map
        await asyncio.gather(
            *(store.create(pod_key(f"p{i:03d}"), big_pod(f"p{i:03d}")) for i in range(start, start + 40))
        )
    assert store._env.info()["map_size"] > 1 << 20
    assert store.revision == 400
    assert store.count("/registry/pods/") == 400
    assert len(await store.watch("", 0).next_batch()) == 400


async def write_until_unavailable(store: Store, prefix: str) -> tuple[int, list[str]]:
    """Write batches of 8 until a batch fails; return (the revision before it, its keys)."""
    for round_ in range(10_000):
        keys = [pod_key(f"{prefix}{round_:05d}-{j}") for j in range(8)]
        results = await asyncio.gather(
            *(store.create(key, big_pod(key.rsplit("/", 1)[1])) for key in keys),
            return_exceptions=True,
        )
        failed = [r for r in results if isinstance(r, BaseException)]
        if failed:
            assert all(isinstance(r, errors.StorageUnavailable) for r in failed), failed
            return store.revision, [k for k, r in zip(keys, results) if isinstance(r, BaseException)]
    raise AssertionError("the store never ran out of space")


async def check_nothing_half_written(store: Store, revision_before: int, failed_keys: list[str]) -> None:
    assert store.revision == revision_before
    for key in failed_keys:
        assert store.get(key) is None
    listed = store.list("/registry/pods/")
    assert listed.revision == revision_before
    assert len(listed.records) == store.count("/registry/pods/")
    assert max(r.revision for r in listed.records) <= revision_before
    first = store.get(pod_key("f00000-0"))
    assert first is not None and first.revision == 1


async def test_a_map_that_may_not_grow_fails_the_batch_cleanly(open_store: OpenStore) -> None:
    store = await open_store(map_size=1 << 20, max_map_size=1 << 20)
    revision, failed = await write_until_unavailable(store, "f")
    await check_nothing_half_written(store, revision, failed)
    # Smaller writes may still fit; the first that does not fails the same clean way.
    with pytest.raises(errors.StorageUnavailable, match="may not grow"):
        for i in range(100):
            revision = store.revision
            await store.create(pod_key(f"again-{i}"), big_pod(f"again-{i}"))
    assert store.revision == revision
    assert store._env.info()["map_size"] == 1 << 20


@pytest.fixture
def small_filesystem(tmp_path: Path) -> Iterator[Path]:
    """A 6 MiB tmpfs, mounted for this test (needs root, as in our CI container)."""
    mount_point = tmp_path / "small-fs"
    mount_point.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root; the map-that-may-not-grow test covers the rest")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(mount_point)],
        capture_output=True, text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


async def test_a_full_disk_fails_the_batch_cleanly_and_writes_resume_once_space_is_free(
    small_filesystem: Path,
) -> None:
    filler = small_filesystem / "filler"
    filler.write_bytes(b"\0" * (3 << 20))  # leave ~3 MiB for the store
    store = await Store.open(
        small_filesystem / "db", map_size=64 << 20,
        retention=Retention(max_events=1_000_000, max_age_seconds=3600),
    )
    try:
        revision, failed = await write_until_unavailable(store, "f")
        await check_nothing_half_written(store, revision, failed)
        # Single writes may still fit in what the failed batch could not use; the first that does
        # not fails the same clean way.
        with pytest.raises(errors.StorageUnavailable, match="disk"):
            for i in range(100):
                revision = store.revision
                await store.create(pod_key(f"still-full-{i}"), big_pod(f"still-full-{i}"))
        assert store.revision == revision

        filler.unlink()
        after = await store.create(pod_key("after"), big_pod("after"))
        assert after.revision == revision + 1
        events = await store.watch("", revision - 1).next_batch()
        assert [e.revision for e in events] == [revision, revision + 1]
    finally:
        await store.close()

    reopened = await Store.open(small_filesystem / "db", map_size=64 << 20)
    try:
        assert reopened.revision == revision + 1
        assert reopened.get(pod_key("after")) == after
    finally:
        await reopened.close()
