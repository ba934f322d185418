"""Child process of the crash test: writes to a store as fast as it can until it is killed.

Run as `python -m tests.storage.crash_writer <path> <seed>` from the repository root. Prints
`ready <revision>` once the store is open, then one line per *acknowledged* write,
`<op> <revision> <key>`, flushed before the next write of that task is submitted. The parent
(`test_crash.py`) SIGKILLs it at a random moment and checks the store against these lines.
"""

from __future__ import annotations

import asyncio
import random
import sys

from storage import Retention, Store, errors

TASKS = 16
KEYS_PER_TASK = 12


async def run(path: str, seed: int) -> None:
    store = await Store.open(path, map_size=256 << 20, retention=Retention(max_events=1500))
    out = sys.stdout
    out.write(f"ready {store.revision}\n")
    out.flush()

    async def writer(task: int) -> None:
        rng = random.Random(seed * 1000 + task)
        while True:
            key = f"/registry/crash/t{task:02d}/k{rng.randrange(KEYS_PER_TASK):02d}"
            current = store.get(key)  # only this task writes this key, so this is up to date
            payload = {"task": task, "n": rng.random(), "pad": "p" * rng.randrange(100, 3000)}
            if current is None:
                op = "create"
                record = await store.create(key, {"metadata": {"name": key}, "data": payload})
            elif rng.random() < 0.25:
                op = "delete"
                record = await store.delete(key, expected_revision=current.revision)
            else:
                op = "update"
                record = await store.update(
                    key, {"metadata": {"name": key}, "data": payload},
                    expected_revision=current.revision,
                )
            out.write(f"{op} {record.revision} {key}\n")
            out.flush()

    try:
        await asyncio.gather(*(writer(t) for t in range(TASKS)))
    except errors.StorageError as failure:  # any storage error is a test failure for the parent
        out.write(f"error {failure!r}\n")
        out.flush()
        raise


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], int(sys.argv[2])))
