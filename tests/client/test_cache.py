"""The store: keys, replace, and indexes kept right through add, update, delete and late indexers."""

from __future__ import annotations

from typing import Any

from client import cache


def _obj(name: str, namespace: str | None = "ns", owners: tuple[str, ...] = ()) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "ownerReferences": [{"uid": u} for u in owners]}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta}


def test_keys_are_namespace_slash_name_or_just_the_name_when_cluster_scoped() -> None:
    assert cache.key_of(_obj("a")) == "ns/a"
    assert cache.key_of(_obj("node-1", None)) == "node-1"


def test_an_update_refiles_the_object_under_its_new_index_values() -> None:
    store = cache.Store({"owner": cache.by_owner_uid})
    store.add(_obj("a", owners=("x",)))
    previous = store.update(_obj("a", owners=("y",)))
    assert previous is not None and previous["metadata"]["ownerReferences"] == [{"uid": "x"}]
    assert store.by_index("owner", "x") == []
    assert [o["metadata"]["name"] for o in store.by_index("owner", "y")] == ["a"]


def test_delete_and_replace_leave_no_stale_index_entries() -> None:
    store = cache.Store({"owner": cache.by_owner_uid, "uid": cache.by_uid})
    store.add(_obj("a", owners=("x",)))
    store.add(_obj("b", owners=("x",)))
    store.delete(_obj("a"))
    assert [o["metadata"]["name"] for o in store.by_index("owner", "x")] == ["b"]
    store.replace([_obj("c", owners=("z",))])
    assert store.keys() == ["ns/c"]
    assert store.by_index("owner", "x") == [] and store.by_index("uid", "uid-b") == []
    assert store.by_index("uid", "uid-c")[0]["metadata"]["name"] == "c"


def test_an_indexer_added_late_is_built_from_what_is_already_stored() -> None:
    store = cache.Store()
    store.add(_obj("a", "one"))
    store.add(_obj("b", "two"))
    store.add_indexer("namespace", cache.by_namespace)
    assert [o["metadata"]["name"] for o in store.by_index("namespace", "two")] == ["b"]
