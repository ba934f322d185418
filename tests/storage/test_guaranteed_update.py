"""guaranteed_update: retries on conflict, skips no-op writes, creates when allowed."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from storage import Store, errors
from tests.storage.samples import pod, pod_key

decode = msgspec.json.decode


async def test_concurrent_conflicting_updates_all_land(store: Store) -> None:
    await store.create(pod_key("counter"), pod("counter", data={"n": 0}))
    calls = 0

    async def increment(obj: dict[str, Any] | None) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        assert obj is not None
        await asyncio.sleep(0)  # let the other writers read the same revision
        obj["data"]["n"] += 1
        return obj

    records = await asyncio.gather(
        *(store.guaranteed_update(pod_key("counter"), increment) for _ in range(20))
    )

    final = store.get(pod_key("counter"))
    assert final is not None
    assert decode(final.value)["data"]["n"] == 20
    assert sorted(r.revision for r in records) == list(range(2, 22))
    assert calls > 20  # some of them really did conflict and retry


async def test_try_update_gets_a_private_copy(store: Store) -> None:
    created = await store.create(pod_key("a"), pod("a"))
    handed_out: list[dict[str, Any]] = []

    def keep(obj: dict[str, Any] | None) -> dict[str, Any]:
        assert obj is not None
        handed_out.append(obj)
        obj["metadata"]["labels"] = {"x": "y"}
        return obj

    await store.guaranteed_update(pod_key("a"), keep)
    await store.guaranteed_update(pod_key("a"), keep)
    assert handed_out[0] is not handed_out[1]
    assert "labels" not in decode(created.value)["metadata"]


async def test_an_unchanged_result_writes_nothing(store: Store) -> None:
    created = await store.create(pod_key("a"), pod("a"))
    watcher = store.watch("", store.revision)

    same = await store.guaranteed_update(pod_key("a"), lambda obj: obj)  # type: ignore[arg-type,return-value]

    def touch_only_resource_version(obj: dict[str, Any] | None) -> dict[str, Any]:
        assert obj is not None
        obj["metadata"]["resourceVersion"] = "12345"
        return obj

    also_same = await store.guaranteed_update(pod_key("a"), touch_only_resource_version)

    def drop_resource_version(obj: dict[str, Any] | None) -> dict[str, Any]:
        assert obj is not None
        del obj["metadata"]["resourceVersion"]
        return obj

    still_same = await store.guaranteed_update(pod_key("a"), drop_resource_version)
    assert same == created == also_same == still_same
    assert store.revision == 1

    changed = await store.guaranteed_update(
        pod_key("a"), lambda obj: {**obj, "status": {"phase": "Running"}}  # type: ignore[dict-item]
    )
    assert changed.revision == 2
    assert [e.revision for e in await watcher.next_batch()] == [2]


async def test_exceptions_from_try_update_abort_and_propagate(store: Store) -> None:
    await store.create(pod_key("a"), pod("a"))

    def refuse(obj: dict[str, Any] | None) -> dict[str, Any]:
        raise RuntimeError("admission said no")

    with pytest.raises(RuntimeError, match="admission said no"):
        await store.guaranteed_update(pod_key("a"), refuse)
    assert store.revision == 1


async def test_missing_key_without_allow_create_is_key_not_found(store: Store) -> None:
    with pytest.raises(errors.KeyNotFound):
        await store.guaranteed_update(pod_key("a"), lambda obj: pod("a"))


async def test_allow_create_hands_none_and_creates(store: Store) -> None:
    seen: list[Any] = []

    def make(obj: dict[str, Any] | None) -> dict[str, Any]:
        seen.append(obj)
        return pod("a") if obj is None else {**obj, "data": {"second": True}}

    first = await store.guaranteed_update(pod_key("a"), make, allow_create=True)
    second = await store.guaranteed_update(pod_key("a"), make, allow_create=True)
    assert seen[0] is None and seen[1] is not None
    assert (first.revision, first.create_revision) == (1, 1)
    assert (second.revision, second.create_revision) == (2, 1)


async def test_concurrent_creates_with_allow_create_converge(store: Store) -> None:
    def make_or_bump(obj: dict[str, Any] | None) -> dict[str, Any]:
        if obj is None:
            return pod("a", data={"n": 1})
        obj["data"]["n"] += 1
        return obj

    await asyncio.gather(
        *(store.guaranteed_update(pod_key("a"), make_or_bump, allow_create=True) for _ in range(8))
    )
    final = store.get(pod_key("a"))
    assert final is not None and decode(final.value)["data"]["n"] == 8
    assert final.create_revision == 1 and final.revision == 8
