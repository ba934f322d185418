"""The etcd side of the storage benchmark: what each case does against etcd, through `aetcd`.

`bench.storage` opens one `EtcdSide` on the member that `bench.etcd_anchor` started. Values are
the same Pod dicts haru stores, encoded with msgspec on every write (haru encodes on every write
too). A put is a plain durable Put (etcd fsyncs its WAL before answering).
"""

from __future__ import annotations

import time
from typing import Any

import aetcd
import msgspec

from bench._watch_case import DeliveryLog

# gRPC's default 4 MB receive limit breaks a 10k-object range (measurements.md 1.6).
CLIENT_OPTIONS = {"grpc.max_receive_message_length": 512 << 20}


class EtcdSide:
    name = "etcd"

    def __init__(self, port: int) -> None:
        self.client = aetcd.Client(host="127.0.0.1", port=port, options=CLIENT_OPTIONS)

    async def connect(self) -> None:
        await self.client.connect()

    async def close(self) -> None:
        await self.client.close()

    async def put(self, key: str, obj: dict[str, Any]) -> int:
        """Durable write; returns the revision etcd assigned."""
        result = await self.client.put(key.encode(), msgspec.json.encode(obj))
        return int(result.header.revision)

    async def get(self, key: str) -> bytes | None:
        result = await self.client.get(key.encode())
        return None if result is None else result.value

    async def list_records(self, prefix: str) -> list[aetcd.rtypes.KeyValue]:
        """A linearizable prefix range, every entry turned into aetcd's KeyValue record."""
        result = await self.client.get_prefix(prefix.encode())
        return list(result)

    async def watch_into(self, prefix: str, start_revision: int, log: DeliveryLog) -> None:
        """Watch events after `start_revision` until cancelled, recording each event's arrival.

        aetcd hands events over one at a time (all watches share one gRPC stream), so each
        recorded batch holds one revision.
        """
        perf = time.perf_counter
        # etcd's start_revision is inclusive; haru's "watch from R" means events after R.
        watch = await self.client.watch_prefix(prefix.encode(), start_revision=start_revision + 1)
        try:
            async for event in watch:
                log.record(perf(), (event.kv.mod_revision,))
        finally:
            await watch.cancel()

    async def revision(self) -> int:
        """etcd's current revision, from the header of a range over a key nobody writes."""
        result = await self.client.get_prefix(b"\x00bench-revision-probe")
        return int(result.header.revision)
