"""`--profile DIR`: py-spy samples the server child while a case runs, to say where its time went.

`bench.apiserver` wraps each server-side case in `profiled(pid, DIR, slug)`. When DIR is None it
does nothing; otherwise it runs `py-spy record --format raw` (collapsed stacks, non-blocking, so
the server is not paused) on the child for the length of the case, writes DIR/<slug>.txt, and
`top_frames` reads such a file back into the frames with the largest self and inclusive shares.
py-spy is a separate tool (`pip install py-spy`); without it, `--profile` is refused up front.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import signal
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

_FRAME = re.compile(r"(.*) \((.*?):\d+\)$")


def available() -> bool:
    return shutil.which("py-spy") is not None


@contextlib.asynccontextmanager
async def profiled(pid: int, directory: Path | None, slug: str, *, gil: bool = False) -> AsyncIterator[Path | None]:
    """`gil`: sample only the thread holding the GIL (CPU spent in Python, not threads waiting on
    an fsync or on the GIL, which py-spy otherwise counts as busy)."""
    if directory is None:
        yield None
        return
    directory.mkdir(parents=True, exist_ok=True)
    out = directory / f"{slug}.txt"
    recorder = await asyncio.create_subprocess_exec(
        "py-spy", "record", "--pid", str(pid), "--rate", "250", "--format", "raw", "--nonblocking",
        "-o", str(out), *(["--gil"] if gil else []), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    await asyncio.sleep(0.3)  # py-spy attaches before the case starts
    try:
        yield out
    finally:
        if recorder.returncode is None:
            recorder.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
        try:
            await asyncio.wait_for(recorder.wait(), 30)
        except asyncio.TimeoutError:
            recorder.kill()
            await recorder.wait()


def _short(frame: str) -> str:
    found = _FRAME.match(frame)
    if not found:
        return frame
    return f"{found.group(1)} ({'/'.join(found.group(2).split('/')[-2:])})"


def top_frames(path: Path, count: int = 8) -> list[str]:
    """'self' and 'incl' lines for the frames holding the most samples, as % of all samples."""
    if not path.exists():
        return [f"no profile written to {path}"]
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, samples = line.rpartition(" ")
        if not stack or not samples.isdigit():
            continue
        n = int(samples)
        total += n
        frames = [_short(f) for f in stack.split(";") if not f.startswith(("process ", "thread "))]
        if not frames:
            continue
        own[frames[-1]] += n
        for frame in set(frames):
            inclusive[frame] += n
    if not total:
        return [f"{path}: no samples"]
    # Inclusive shares are most telling below the event loop and the aiohttp plumbing.
    plumbing = ("asyncio/", "runpy", "cluster/cli.py", "threading.py", "aiohttp/web_", "apiserver/app.py")
    deep = [(f, n) for f, n in inclusive.most_common() if not any(p in f for p in plumbing)]
    return ([f"{path.name}: {total:,} samples"]
            + [f"self {100 * n / total:4.1f}% {f}" for f, n in own.most_common(count)]
            + [f"incl {100 * n / total:4.1f}% {f}" for f, n in deep[:count]])
