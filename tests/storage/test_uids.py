"""The uid index (`layout`'s `uids` database): kept in step by every write, read by prefix in one
snapshot, and filled once when a store written before it existed is opened."""

from __future__ import annotations

from pathlib import Path

import lmdb

from storage import layout
from tests.storage.conftest import OpenStore
from tests.storage.samples import pod, pod_key


async def test_writes_keep_the_uid_index_in_step(open_store: OpenStore) -> None:
    store = await open_store()
    for name in ("a", "b", "c"):
        await store.create(pod_key(name), pod(name))
    await store.create(pod_key("z", "other"), pod("z", "other"))
    no_uid = pod("d")
    del no_uid["metadata"]["uid"]
    await store.create(pod_key("d"), no_uid)
    renamed = pod("b")
    renamed["metadata"]["uid"] = "uid-b2"
    await store.update(pod_key("b"), renamed)
    await store.delete(pod_key("c"))
    revision, found = store.uids("/registry/pods/ns/")
    assert revision == store.revision
    assert found == [(pod_key("a"), "uid-a"), (pod_key("b"), "uid-b2"), (pod_key("d"), "")]  # c is gone
    lost = pod("a")
    del lost["metadata"]["uid"]
    await store.update(pod_key("a"), lost)
    assert store.uids("/registry/pods/")[1] == [
        (pod_key("a"), ""), (pod_key("b"), "uid-b2"), (pod_key("d"), ""), (pod_key("z", "other"), "uid-z")]


async def test_a_store_from_before_the_uid_index_gets_it_filled_on_open(open_store: OpenStore, tmp_path: Path) -> None:
    store = await open_store(tmp_path / "db")
    for name in ("a", "b"):
        await store.create(pod_key(name), pod(name))
    await store.close()
    env = lmdb.open(str(tmp_path / "db"), max_dbs=4)  # make it look like an older store
    try:
        with env.begin(write=True) as txn:
            txn.drop(env.open_db(layout.UIDS_DB, txn=txn), delete=True)
            txn.delete(layout.META_UIDS_INDEXED, db=env.open_db(layout.META_DB, txn=txn))
    finally:
        env.close()
    reopened = await open_store(tmp_path / "db")
    assert reopened.uids("/registry/pods/")[1] == [(pod_key("a"), "uid-a"), (pod_key("b"), "uid-b")]


def test_the_uid_is_read_from_json_without_decoding_the_rest() -> None:
    assert layout.uid_of_json(b'{"metadata":{"name":"x","uid":"u-1"},"spec":{"big":[1,2,3]}}') == "u-1"
    assert layout.uid_of_json(b'{"metadata":{"name":"x"}}') == ""
    assert layout.uid_of_json(b'{"metadata":{"uid":7}}') == ""
    assert layout.uid_of_json(b"not json") == ""
