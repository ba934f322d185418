"""etcd's request limit: a put whose key and stored bytes exceed 1.5 MiB fails and writes nothing,
while the other writes of the same batch commit."""

from __future__ import annotations

import asyncio

import pytest

from storage import Store, errors, writes
from tests.storage.samples import pod, pod_key


def _padded(name: str, total: int) -> dict:
    obj = pod(name)
    obj["metadata"]["annotations"] = {"pad": "x" * total}
    return obj


async def test_a_create_over_the_limit_fails_and_spends_no_revision(store: Store) -> None:
    with pytest.raises(errors.RequestTooLarge) as raised:
        await store.create(pod_key("a"), _padded("a", writes.MAX_REQUEST_BYTES))
    assert raised.value.limit == writes.MAX_REQUEST_BYTES and raised.value.size > writes.MAX_REQUEST_BYTES
    assert store.revision == 0 and store.get(pod_key("a")) is None


async def test_an_update_over_the_limit_leaves_the_stored_object(store: Store) -> None:
    created = await store.create(pod_key("a"), pod("a"))
    with pytest.raises(errors.RequestTooLarge):
        await store.update(pod_key("a"), _padded("a", writes.MAX_REQUEST_BYTES))
    assert store.get(pod_key("a")) == created and store.revision == created.revision


async def test_the_rest_of_the_batch_commits(store: Store) -> None:
    results = await asyncio.gather(
        store.create(pod_key("small"), pod("small")),
        store.create(pod_key("big"), _padded("big", writes.MAX_REQUEST_BYTES)),
        store.create(pod_key("near"), _padded("near", writes.MAX_REQUEST_BYTES - 2048)),
        return_exceptions=True,
    )
    assert isinstance(results[1], errors.RequestTooLarge)
    assert store.get(pod_key("small")) is not None and store.get(pod_key("near")) is not None
    assert store.get(pod_key("big")) is None
