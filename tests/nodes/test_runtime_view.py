"""`Streams`, the one concrete class of the runtime view: stdin read in chunks or in lines (as an
interactive shell reads it), and its end seen once and for good.
"""

from __future__ import annotations

import asyncio

from nodes.runtime_view import Streams


async def test_stdin_reads_as_lines_across_chunks_and_ends_for_good() -> None:
    stdin: asyncio.Queue[bytes] = asyncio.Queue()
    for chunk in (b"echo one\necho ", b"two\n", b"tail", b""):
        stdin.put_nowait(chunk)
    streams = Streams(stdin=stdin, stdout=None, stderr=None)

    assert [await streams.readline() for _ in range(4)] == [b"echo one\n", b"echo two\n", b"tail", b""]
    assert await streams.read() == b""


async def test_no_stdin_is_an_empty_one() -> None:
    streams = Streams(stdin=None, stdout=None, stderr=None)

    assert (await streams.read(), await streams.readline()) == (b"", b"")
