"""The up-front disk reserve (`layout.reserve_space`): its size comes from `Store.open(reserve_bytes=)`
first, then `HARU_STORE_RESERVE_BYTES`; 0 reserves nothing (the embedded test clusters' choice)."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import layout
from tests.storage.conftest import OpenStore

PIECES = 4


def _data_file(path: Path) -> int:
    return (path / "data.mdb").stat().st_size


async def test_an_explicit_size_wins_over_the_environment(open_store: OpenStore, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(layout.RESERVE_ENV, "0")
    await open_store(tmp_path / "reserved", reserve_bytes=PIECES * layout.RESERVE_PIECE)
    assert _data_file(tmp_path / "reserved") >= PIECES * layout.RESERVE_PIECE


async def test_zero_reserves_nothing(open_store: OpenStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(layout.RESERVE_ENV, str(PIECES * layout.RESERVE_PIECE))
    await open_store(tmp_path / "plain", reserve_bytes=0)
    assert _data_file(tmp_path / "plain") < layout.RESERVE_PIECE


async def test_the_environment_sets_the_size_when_open_does_not(open_store: OpenStore, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(layout.RESERVE_ENV, str(PIECES * layout.RESERVE_PIECE))
    await open_store(tmp_path / "env")
    assert _data_file(tmp_path / "env") >= PIECES * layout.RESERVE_PIECE
