"""More of the commands `nodes/shell.py` runs, as busybox prints them: `seq`, `date`, `uptime`, `gzip`.

Each is a builtin in the shell's shape, `(argv, context, stdin) -> events` (`("out", text)`,
`("err", text)`, `("exit", code)`); `shell.COMMANDS` registers them. Binary output (gzip) travels as
text decoded with `surrogateescape`, which the exec adapter (`kubelet/served_view.py`) encodes back
to the same bytes.
"""

from __future__ import annotations

import gzip as gzip_lib
import time
from datetime import datetime, timezone
from typing import Any, Iterator

Event = tuple[str, object]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def seq(args: list[str], ctx: Any, stdin: str) -> Iterator[Event]:
    numbers = [_number(a) for a in args[1:]]
    if not 1 <= len(numbers) <= 3:
        yield "err", "Usage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n"
        yield "exit", 1
        return
    for arg, value in zip(args[1:], numbers):
        if value is None:
            yield "err", f"seq: invalid number '{arg}'\n"
            yield "exit", 1
            return
    first, step, last = 1.0, 1.0, numbers[-1]
    if len(numbers) >= 2:
        first = numbers[0]  # type: ignore[assignment]
    if len(numbers) == 3:
        step = numbers[1]  # type: ignore[assignment]
    if step == 0:
        yield "exit", 1
        return
    integral = all(float(a).is_integer() and "." not in a for a in args[1:])
    out, value, count = [], first, 0
    while (value <= last if step > 0 else value >= last) and count < 100_000:
        out.append(f"{int(value)}" if integral else f"{value:g}")
        value, count = first + step * (count + 1), count + 1
    yield "out", "".join(line + "\n" for line in out)


def date(args: list[str], ctx: Any, stdin: str) -> Iterator[Event]:
    now = datetime.now(timezone.utc)
    formats = [a[1:] for a in args[1:] if a.startswith("+")]
    if formats:
        yield "out", now.strftime(formats[0]) + "\n"
        return
    # busybox: "Tue Dec  1 17:49:51 UTC 2026" (the day padded with a space)
    yield "out", f"{now:%a %b} {now.day:>2} {now:%H:%M:%S} UTC {now:%Y}\n"


def uptime(args: list[str], ctx: Any, stdin: str) -> Iterator[Event]:
    now = datetime.now(timezone.utc)
    up = max(0, int(time.time() - (getattr(ctx, "boot_time", 0.0) or time.time())))
    hours, minutes = divmod(up // 60, 60)
    since = f"{hours}:{minutes:02}" if hours else f"{minutes} min"
    yield "out", f" {now:%H:%M:%S} up {since},  0 users,  load average: 0.00, 0.00, 0.00\n"


def gzip(args: list[str], ctx: Any, stdin: str) -> Iterator[Event]:
    flags = "".join(a.lstrip("-") for a in args[1:] if a.startswith("-") and a != "-")
    files = [a for a in args[1:] if not a.startswith("-")]
    if files:
        yield "err", f"gzip: can't open '{files[0]}': Read-only file system\n"
        yield "exit", 1
        return
    data = stdin.encode("utf-8", "surrogateescape")
    if "d" in flags:
        try:
            data = gzip_lib.decompress(data)
        except (OSError, EOFError):
            yield "err", "gzip: invalid magic\n"
            yield "exit", 1
            return
    else:
        data = gzip_lib.compress(data, mtime=0)
    yield "out", data.decode("utf-8", "surrogateescape")


COMMANDS = {"seq": seq, "date": date, "uptime": uptime, "gzip": gzip}
