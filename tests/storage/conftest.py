"""Fixtures for the storage tests: a fresh `Store` in a temporary directory, closed afterwards.

`open_store(path, **options)` opens (or reopens) a store and registers it for closing, so a test
can restart the store on the same directory and still leave nothing open behind it. Sample objects
and keys are in `tests/storage/samples.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from storage import Retention, Store

OpenStore = Callable[..., Awaitable[Store]]


@pytest.fixture
async def open_store(tmp_path: Path) -> AsyncIterator[OpenStore]:
    opened: list[Store] = []

    async def _open(path: Path | None = None, **options: Any) -> Store:
        options.setdefault("map_size", 64 << 20)
        store = await Store.open(path or tmp_path / "db", **options)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        await store.close()


@pytest.fixture
async def store(open_store: OpenStore) -> Store:
    return await open_store(retention=Retention(max_events=1_000_000, max_age_seconds=3600))
