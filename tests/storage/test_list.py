"""Prefix lists: key order, snapshots, pagination at the first page's revision, old revisions."""

from __future__ import annotations

import base64

import msgspec
import pytest

from storage import ListResult, Store, errors, listing
from tests.storage.samples import pod, pod_key

decode = msgspec.json.decode


def names(result: ListResult) -> list[str]:
    return [decode(r.value)["metadata"]["name"] for r in result.records]


async def fill(store: Store, count: int, namespace: str = "ns") -> None:
    for i in range(count):
        await store.create(pod_key(f"p{i:03d}", namespace), pod(f"p{i:03d}", namespace))


async def test_list_returns_only_the_prefix_in_key_order(store: Store) -> None:
    for name in ["c", "a", "b"]:
        await store.create(pod_key(name), pod(name))
    await store.create(pod_key("z", "other"), pod("z", "other"))
    await store.create("/registry/pods/nsx/q", pod("q", "nsx"))

    result = store.list("/registry/pods/ns/")
    assert names(result) == ["a", "b", "c"]
    assert result.revision == 5
    assert (result.continue_token, result.remaining) == (None, 0)
    assert store.count("/registry/pods/ns/") == 3
    assert store.count("/registry/pods/") == 5
    assert [r.revision for r in result.records] == [2, 3, 1]


async def test_a_list_ends_exactly_where_the_prefix_ends(store: Store) -> None:
    # "0" is the byte after "/": the first key past "/registry/pods/ns/" in key order.
    keys = ["/registry/pods/ns/", "/registry/pods/ns/a", "/registry/pods/ns/\u00e9t\u00e9",
            "/registry/pods/ns0", "/registry/pods/ns0/b", "/registry/pods/ns"]
    for i, key in enumerate(keys):
        await store.create(key, pod(f"p{i}"))

    assert [r.key for r in store.list("/registry/pods/ns/").records] == keys[:3]
    assert [r.key for r in store.list("/registry/pods/ns/", limit=2).records] == keys[:2]
    assert store.list("/registry/pods/ns/", limit=2).remaining == 1
    assert [r.key for r in store.list("").records] == sorted(keys, key=str.encode)
    assert store.list("/registry/pods/ns/\u00e9").records[0].key == keys[2]


async def test_pages_are_served_at_the_first_pages_revision_while_writes_happen(store: Store) -> None:
    await fill(store, 10)
    first = store.list("/registry/pods/ns/", limit=4)
    assert names(first) == ["p000", "p001", "p002", "p003"]
    assert (first.revision, first.remaining) == (10, 6)
    assert first.continue_token is not None

    # Writes between pages: a new key inside the next page, an update, a delete, a recreate.
    await store.create(pod_key("p004a"), pod("p004a"))
    await store.update(pod_key("p005"), pod("p005", status={"changed": True}))
    await store.delete(pod_key("p006"))
    await store.delete(pod_key("p000"))
    await store.create(pod_key("p000"), pod("p000"))

    second = store.list("/registry/pods/ns/", limit=4, continue_token=first.continue_token)
    assert names(second) == ["p004", "p005", "p006", "p007"]
    assert second.revision == 10
    assert "status" not in decode(second.records[1].value)
    assert second.records[1].revision == 6
    assert second.remaining == 2

    third = store.list("/registry/pods/ns/", continue_token=second.continue_token, limit=4)
    assert names(third) == ["p008", "p009"]
    assert (third.continue_token, third.remaining) == (None, 0)

    now = store.list("/registry/pods/ns/")
    assert names(now) == ["p000", "p001", "p002", "p003", "p004", "p004a", "p005", "p007",
                          "p008", "p009"]


async def test_a_list_at_an_old_revision_rebuilds_that_state(store: Store) -> None:
    await fill(store, 5)                                          # revisions 1..5
    await store.update(pod_key("p001"), pod("p001", data={"v": 2}))  # 6
    snapshot = {r.key: r for r in store.list("/registry/pods/ns/").records}
    await store.delete(pod_key("p002"))                           # 7
    await store.update(pod_key("p001"), pod("p001", data={"v": 3}))  # 8
    await store.create(pod_key("p010"), pod("p010"))              # 9
    await store.create(pod_key("x", "other"), pod("x", "other"))  # 10

    at_six = store.list("/registry/pods/ns/", revision=6)
    assert at_six.revision == 6
    assert {r.key: r for r in at_six.records} == snapshot

    at_three = store.list("/registry/pods/ns/", revision=3)
    assert names(at_three) == ["p000", "p001", "p002"]
    assert decode(at_three.records[1].value).get("data") is None

    assert names(store.list("/registry/pods/ns/", revision=0)) == []
    paged = store.list("/registry/pods/ns/", revision=6, limit=2)
    assert names(paged) == ["p000", "p001"] and paged.remaining == 3
    rest = store.list("/registry/pods/ns/", continue_token=paged.continue_token)
    assert names(rest) == ["p002", "p003", "p004"]


async def test_lists_at_compacted_revisions_and_their_tokens_expire(store: Store) -> None:
    await fill(store, 6)
    page = store.list("/registry/pods/ns/", limit=2)
    await store.update(pod_key("p003"), pod("p003", data={}))
    assert names(store.list("/registry/pods/ns/", continue_token=page.continue_token)) == [
        "p002", "p003", "p004", "p005"
    ]

    await store.compact(7)
    assert store.compacted_revision == 7
    with pytest.raises(errors.Expired) as expired:
        store.list("/registry/pods/ns/", continue_token=page.continue_token)
    assert (expired.value.revision, expired.value.compacted) == (6, 7)
    with pytest.raises(errors.Expired):
        store.list("/registry/pods/ns/", revision=5)
    assert len(store.list("/registry/pods/ns/", revision=7).records) == 6


async def test_a_token_at_the_current_revision_still_works_after_compaction_to_it(store: Store) -> None:
    await fill(store, 4)
    page = store.list("/registry/pods/ns/", limit=2)
    await store.compact(store.revision)
    assert names(store.list("/registry/pods/ns/", continue_token=page.continue_token)) == [
        "p002", "p003"
    ]


@pytest.mark.parametrize(
    "token",
    [
        "not base64 at all!",
        base64.urlsafe_b64encode(b"[1,2,3]").decode(),
        base64.urlsafe_b64encode(b'{"v":1,"rv":"7","start":"a"}').decode(),
        base64.urlsafe_b64encode(b'{"v":1,"rv":3}').decode(),
        base64.urlsafe_b64encode(b'{"v":9,"rv":3,"start":"a"}').decode(),
        base64.urlsafe_b64encode(b'{"v":1,"rv":99,"start":"a"}').decode(),
        "",
    ],
    ids=["garbage", "a list", "string revision", "no start", "other version", "future revision",
         "empty"],
)
async def test_garbage_continue_tokens_are_invalid(store: Store, token: str) -> None:
    await fill(store, 3)
    with pytest.raises(errors.InvalidContinue):
        store.list("/registry/pods/ns/", continue_token=token)


@pytest.mark.parametrize("old_revision", [False, True], ids=["now", "at an old revision"])
async def test_remaining_is_none_when_counting_would_not_be_cheap(
    store: Store, monkeypatch: pytest.MonkeyPatch, old_revision: bool
) -> None:
    monkeypatch.setattr(listing, "REMAINING_COUNT_LIMIT", 3)
    await fill(store, 8)
    revision = store.revision
    if old_revision:
        await store.delete(pod_key("p007"))
    page = store.list("/registry/pods/ns/", limit=4, revision=revision if old_revision else None)
    assert (page.remaining, page.continue_token is not None) == (None, True)
    last = store.list("/registry/pods/ns/", limit=2, continue_token=page.continue_token)
    assert last.remaining == 2
    assert names(store.list("/registry/pods/ns/", continue_token=last.continue_token)) == [
        "p006", "p007"
    ]


async def test_a_list_in_the_future_is_refused(store: Store) -> None:
    await fill(store, 2)
    with pytest.raises(errors.RevisionTooLarge):
        store.list("/registry/pods/ns/", revision=3)


async def test_pagination_walks_every_key_exactly_once(store: Store) -> None:
    await fill(store, 25)
    seen: list[str] = []
    token = None
    while True:
        page = store.list("/registry/pods/ns/", limit=7, continue_token=token)
        seen += names(page)
        # Churn between pages must not change what the walk sees.
        await store.create(pod_key(f"p{len(seen):03d}x"), pod("extra"))
        token = page.continue_token
        if token is None:
            break
    assert seen == [f"p{i:03d}" for i in range(25)]


async def test_list_where_keeps_what_the_filter_accepts_in_one_snapshot(store: Store) -> None:
    for name in ("a", "b", "c", "d"):
        await store.create(pod_key(name), pod(name))
    seen: list[tuple[str, int]] = []

    def keep(key: str, revision: int, value: memoryview) -> bool:
        seen.append((key, revision))
        return key.endswith(("b", "d")) and b'"resourceVersion"' in bytes(value)

    result = store.list_where(pod_key(""), keep)
    assert [r.key for r in result.records] == [pod_key("b"), pod_key("d")]
    assert all(isinstance(r.value, bytes) for r in result.records)
    assert [r.value for r in result.records] == [store.get(pod_key(n)).value for n in ("b", "d")]  # type: ignore[union-attr]
    assert seen == [(pod_key(n), i + 1) for i, n in enumerate("abcd")]
    assert result.revision == store.revision and result.continue_token is None


async def test_get_many_at_reads_the_keys_as_they_were_at_an_older_revision(store: Store) -> None:
    for name in ("a", "b", "c"):
        await store.create(pod_key(name), pod(name))
    at = store.revision
    before = {n: store.get(pod_key(n)) for n in "abc"}
    changed = pod("b")
    changed["metadata"]["labels"] = {"changed": "yes"}
    await store.update(pod_key("b"), changed)
    await store.delete(pod_key("c"))
    await store.create(pod_key("d"), pod("d"))
    keys = [pod_key(n) for n in "cbad"]
    records = store.get_many_at(keys, "/registry/pods/ns/", at)
    assert records == [before["c"], before["b"], before["a"]]  # as at `at`: d did not exist yet
    now = store.get_many_at(keys, "/registry/pods/ns/", store.revision)
    assert [r.key for r in now] == [pod_key("b"), pod_key("a"), pod_key("d")]
    assert now[0].value == store.get(pod_key("b")).value  # type: ignore[union-attr]
    with pytest.raises(errors.RevisionTooLarge):
        store.get_many_at(keys, "/registry/pods/ns/", store.revision + 1)
    await store.compact(store.revision)
    with pytest.raises(errors.Expired):
        store.get_many_at(keys, "/registry/pods/ns/", at)
