"""The decoded namespaces NamespaceLifecycle and admission share: read once, dropped on any write."""

from __future__ import annotations

from pathlib import Path

from apiserver.namespace_cache import NamespaceCache
from storage import Store

PREFIX = "/registry/core/namespaces/"


async def test_a_namespace_is_read_once_and_seen_again_after_any_namespace_write(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "db", map_size=64 << 20)
    try:
        cache = NamespaceCache(store, PREFIX)
        assert cache.get("team") is None  # remembered as missing …
        await store.create(PREFIX + "team", {"metadata": {"name": "team", "labels": {"a": "1"}}})
        found = cache.get("team")  # … until a namespace is written
        assert found is not None and found["metadata"]["labels"] == {"a": "1"}
        assert cache.get("team") is found

        await store.create("/registry/core/pods/team/p", {"metadata": {"name": "p"}})
        assert cache.get("team") is found  # other writes keep what was read

        await store.update(PREFIX + "team", {"metadata": {"name": "team", "labels": {"a": "2"}}})
        assert cache.get("team")["metadata"]["labels"] == {"a": "2"}  # type: ignore[index]
        await store.delete(PREFIX + "team")
        assert cache.get("team") is None
    finally:
        await store.close()
