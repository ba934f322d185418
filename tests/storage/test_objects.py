"""Create, get, update, delete and their preconditions; revisions; restart persistence."""

from __future__ import annotations

import os

import msgspec
import pytest

from storage import Record, Store, errors
from tests.storage.conftest import OpenStore
from tests.storage.samples import pod, pod_key

decode = msgspec.json.decode


def rv(record: Record) -> str:
    return decode(record.value)["metadata"]["resourceVersion"]


async def test_create_stamps_resource_version_and_leaves_the_callers_dict_alone(store: Store) -> None:
    obj = pod("a")
    obj["metadata"]["resourceVersion"] = "999"
    before = msgspec.json.encode(obj)

    record = await store.create(pod_key("a"), obj)

    assert (record.revision, record.create_revision) == (1, 1)
    assert rv(record) == "1"
    assert msgspec.json.encode(obj) == before
    assert store.get(pod_key("a")) == record
    assert store.revision == 1


async def test_create_of_an_existing_key_fails_with_key_exists_and_consumes_no_revision(
    store: Store,
) -> None:
    await store.create(pod_key("a"), pod("a"))
    with pytest.raises(errors.KeyExists) as raised:
        await store.create(pod_key("a"), pod("a"))
    assert raised.value.revision == 1
    assert store.revision == 1
    assert (await store.create(pod_key("b"), pod("b"))).revision == 2


async def test_update_keeps_create_revision_and_checks_the_expected_revision(store: Store) -> None:
    created = await store.create(pod_key("a"), pod("a"))
    await store.create(pod_key("b"), pod("b"))

    updated = await store.update(pod_key("a"), pod("a", status={"phase": "Running"}),
                                 expected_revision=created.revision)
    assert (updated.revision, updated.create_revision) == (3, 1)
    assert decode(updated.value)["status"] == {"phase": "Running"}

    with pytest.raises(errors.Conflict) as raised:
        await store.update(pod_key("a"), pod("a"), expected_revision=created.revision)
    conflict = raised.value
    assert (conflict.field, conflict.expected, conflict.actual) == ("resourceVersion", 1, 3)
    assert store.get(pod_key("a")) == updated

    unconditional = await store.update(pod_key("a"), pod("a"))
    assert unconditional.revision == 4


async def test_update_and_delete_of_a_missing_key_fail_with_key_not_found(store: Store) -> None:
    with pytest.raises(errors.KeyNotFound):
        await store.update(pod_key("nope"), pod("nope"))
    with pytest.raises(errors.KeyNotFound):
        await store.delete(pod_key("nope"))
    assert store.revision == 0


async def test_delete_returns_the_object_at_the_deletion_revision(store: Store) -> None:
    created = await store.create(pod_key("a"), pod("a"))
    deleted = await store.delete(pod_key("a"))

    assert (deleted.revision, deleted.create_revision) == (2, 1)
    assert rv(deleted) == "2"
    assert decode(deleted.value)["metadata"]["uid"] == "uid-a"
    assert decode(created.value)["spec"] == decode(deleted.value)["spec"]
    assert store.get(pod_key("a")) is None


async def test_delete_preconditions_on_uid_and_revision(store: Store) -> None:
    created = await store.create(pod_key("a"), pod("a"))

    with pytest.raises(errors.Conflict) as wrong_uid:
        await store.delete(pod_key("a"), expected_uid="someone-else")
    assert (wrong_uid.value.field, wrong_uid.value.actual) == ("uid", "uid-a")

    with pytest.raises(errors.Conflict) as wrong_rv:
        await store.delete(pod_key("a"), expected_revision=created.revision + 7)
    assert wrong_rv.value.field == "resourceVersion"

    assert store.get(pod_key("a")) == created
    deleted = await store.delete(pod_key("a"), expected_uid="uid-a", expected_revision=1)
    assert deleted.revision == 2


async def test_a_recreated_key_gets_a_new_create_revision(store: Store) -> None:
    await store.create(pod_key("a"), pod("a"))
    await store.delete(pod_key("a"))
    again = await store.create(pod_key("a"), pod("a"))
    assert (again.revision, again.create_revision) == (3, 3)


async def test_bad_keys_and_objects_are_refused_without_using_a_revision(store: Store) -> None:
    with pytest.raises(ValueError):
        await store.create("", pod("a"))
    with pytest.raises(ValueError):
        await store.create("/" + "k" * 600, pod("a"))
    with pytest.raises(TypeError):
        await store.create(pod_key("a"), {"metadata": "not a dict"})
    with pytest.raises(TypeError):
        await store.create(pod_key("a"), ["not", "a", "dict"])  # type: ignore[arg-type]
    assert store.revision == 0
    assert (await store.create(pod_key("a"), pod("a"))).revision == 1


async def test_revisions_are_gap_free_and_survive_restarts(open_store: OpenStore, tmp_path) -> None:
    path = tmp_path / "restart"
    seen: list[int] = []
    for round_ in range(3):
        store = await open_store(path)
        assert store.revision == len(seen)
        for i in range(5):
            key = pod_key(f"p{i}")
            if round_ == 0:
                record = await store.create(key, pod(f"p{i}"))
            elif round_ == 1:
                record = await store.update(key, pod(f"p{i}", status={"round": round_}))
            else:
                record = await store.delete(key)
            seen.append(record.revision)
        await store.close()
    assert seen == list(range(1, 16))

    store = await open_store(path)
    assert store.revision == 15
    assert store.count("/registry/pods/") == 0
    assert [event.revision for event in await store.watch("", 0).next_batch()] == seen


async def test_objects_persist_across_a_restart(open_store: OpenStore, tmp_path) -> None:
    path = tmp_path / "persist"
    store = await open_store(path)
    written = {pod_key(f"p{i}"): await store.create(pod_key(f"p{i}"), pod(f"p{i}")) for i in range(20)}
    written[pod_key("p3")] = await store.update(pod_key("p3"), pod("p3", status={"x": 1}))
    await store.delete(pod_key("p4"))
    del written[pod_key("p4")]
    await store.close()

    reopened = await open_store(path)
    assert reopened.revision == 22
    assert {r.key: r for r in reopened.list("/registry/pods/").records} == written
    assert (await reopened.create(pod_key("new"), pod("new"))).revision == 23


async def test_one_directory_cannot_be_opened_twice_in_one_process(
    open_store: OpenStore, tmp_path
) -> None:
    store = await open_store(tmp_path / "once")
    with pytest.raises(RuntimeError, match="already open"):
        await open_store(tmp_path / "once")
    await store.close()
    reopened = await open_store(tmp_path / "once")
    assert reopened.revision == 0


async def test_a_forked_child_may_not_use_the_parents_store(store: Store) -> None:
    await store.create(pod_key("a"), pod("a"))
    pid = os.fork()
    if pid == 0:  # the child: every use must be refused, and nothing may be touched
        code = 0
        try:
            store.get(pod_key("a"))
            code = 1
        except errors.StorageUnavailable:
            pass
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.get(pod_key("a")) is not None
    assert (await store.create(pod_key("b"), pod("b"))).revision == 2
