"""Benchmark: server-side sharded LIST and WATCH (KEP-5866) beside their unsharded anchors, one run.

`python -m bench.sharding [--quick]` seeds N pods straight through `storage.Store` (copies of a
template pod the API made, with new names and uids), serves that data dir with the real API server
(`apiserver.runner`) in a child process, and measures over HTTP:
  * LIST: one quarter shard against the unsharded LIST of every pod (target: <= 0.35x the time),
    with the hash memo cold (the first sharded request) and warm;
  * WATCH at R events/s: the child's CPU (all threads, /proc schedstat) with one unsharded watcher,
    4 shard watchers, and 4 unsharded watchers that filter for themselves (client-side sharding),
    each minus a no-watcher run just before it. Target: 4 shards add <= 1.3x what one unsharded
    watcher adds; each shard receives about 1/4 of the bytes.
The events come from `Store.update` inside the child, `--burst` writes at a time (about one group
commit), not from API calls: an API PATCH or a commit per event costs far more than a watcher's
share of it, and that noise hides the watchers. For the same reason every mode runs as `--groups`
independent consumers (the ratio of one group is the ratio of several). Child protocol:
`--serve DIR` prints "serving URL", then obeys stdin lines "write RATE SECONDS BURST" with "wrote N".
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import msgspec

from client import event_loop
from cluster import cli
from storage import Store

REPO = Path(__file__).resolve().parents[1]
NAMESPACES = 10
PODS = "/registry/core/pods/"
QUARTER = "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')"
MODES = ("no watcher", "one unsharded", "4 server-side shards", "4 client-side shards")
WORKING_SET = 4000  # pods the event source rewrites in turn: enough that each quarter holds ~1/4 of them (±3%)


def quarter_selectors() -> list[str]:
    bounds = [f"0x{i << 62:016x}" for i in range(4)] + ["0x10000000000000000"]
    return [f"shardRange(object.metadata.uid, '{bounds[i]}', '{bounds[i + 1]}')" for i in range(4)]


def fnv1a64(data: bytes) -> int:
    """The client's own copy, for client-side sharding (a client does not import the server)."""
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


# -- the child: the API server plus an in-process event source --------------------------------------

async def serve(data_dir: str) -> None:
    from apiserver import runner  # only the child needs the server

    running = await runner.start(data_dir)
    store = running.server.store
    # The pods the event source rewrites, decoded once, before any measured window.
    working_set = {r.key: msgspec.json.decode(r.value) for r in store.list(PODS, limit=WORKING_SET).records}
    cli._tune_gc()  # the collector settings `haru up` runs with
    print(f"serving {running.url}", flush=True)
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    try:
        while line := await stdin.readline():
            command, rate, seconds, burst = line.split()
            assert command == b"write"
            written = await bump_pods(store, working_set, float(rate), float(seconds), int(burst))
            print(f"wrote {written}", flush=True)
    finally:
        await running.stop()


async def bump_pods(store: Store, pods: dict[str, dict[str, Any]], rate: float, seconds: float,
                    burst: int) -> int:
    """Change one pod's annotation `rate` times a second (open loop): one watch event each.

    A plain `Store.update` of an object kept decoded: the cheapest write that makes a real event.
    Writes start `burst` at a time, so group commit makes commits of about `burst` events: with a
    commit (an fsync) per event the write path's own noise hides what the watchers cost.
    """
    tag = uuid.uuid4().hex[:8]  # a new value every run: every write is a change
    keys = list(pods)
    in_flight = asyncio.Semaphore(256)
    written = 0

    async def one(i: int) -> None:
        nonlocal written
        key = keys[i % len(keys)]
        pods[key]["metadata"].setdefault("annotations", {})["bench/tick"] = f"{tag}-{i}"
        async with in_flight:
            await store.update(key, pods[key])
            written += 1

    tasks = []
    start = time.perf_counter()
    for i in range(int(rate * seconds)):
        delay = start + (i - i % burst) / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i)))
    await asyncio.gather(*tasks)
    return written


class ServerProcess:
    """The child process, seen from the benchmark: its URL, its CPU time, its event source."""

    def __init__(self, data_dir: str) -> None:
        # The server's log goes to a file: aiohttp logs every watch the benchmark hangs up on.
        self.log = open(os.path.join(data_dir, "server.log"), "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.sharding", "--serve", data_dir],
            cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
        assert self.process.stdout is not None and self.process.stdin is not None
        line = self.process.stdout.readline()
        if not line.startswith("serving "):
            self.stop()
            with open(self.log.name) as log:
                raise RuntimeError(f"the server did not start: {line!r}\n{log.read()[-2000:]}")
        self.url = line.split()[1]

    def cpu_seconds(self) -> float:
        """CPU time of all the child's threads, from schedstat: nanosecond resolution, where the
        utime/stime of /proc/<pid>/stat tick at 10 ms."""
        total = 0
        task_dir = f"/proc/{self.process.pid}/task"
        for tid in os.listdir(task_dir):
            try:
                with open(f"{task_dir}/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except FileNotFoundError:  # a thread that just ended
                continue
        return total / 1e9

    async def write(self, rate: float, seconds: float, burst: int) -> int:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"write {rate} {seconds} {burst}\n")
        self.process.stdin.flush()
        answer = await asyncio.to_thread(self.process.stdout.readline)
        return int(answer.split()[1])

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()  # the child stops its server when stdin ends
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


# -- seeding ----------------------------------------------------------------------------------------

TEMPLATE_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "template", "labels": {"app": "web", "pod-template-hash": "5d8f7c9b4"},
                 "annotations": {"kubectl.kubernetes.io/default-container": "web"}},
    "spec": {
        "containers": [
            {"name": "web", "image": "registry.example/web:1.27.3", "ports": [{"containerPort": 8080, "name": "http"}],
             "env": [{"name": "APP_NAME", "value": "web"}, {"name": "LOG_LEVEL", "value": "info"},
                     {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
             "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
             "volumeMounts": [{"name": "config", "mountPath": "/etc/web"}]},
            {"name": "log-shipper", "image": "registry.example/shipper:3.1",
             "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
             "volumeMounts": [{"name": "varlog", "mountPath": "/var/log"}]},
        ],
        "volumes": [{"name": "config", "configMap": {"name": "web-config"}}, {"name": "varlog", "emptyDir": {}}],
        "nodeName": "node-001",
    },
}


async def make_template(data_dir: str) -> dict[str, Any]:
    """Create the namespaces and one pod through the API, so the copies carry the server's defaults."""
    server = ServerProcess(data_dir)
    try:
        async with aiohttp.ClientSession(server.url) as http:
            for i in range(NAMESPACES):
                body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"bench-{i:02d}"}}
                async with http.post("/api/v1/namespaces", json=body) as response:
                    assert response.status == 201, await response.text()
            async with http.post("/api/v1/namespaces/bench-00/pods", json=TEMPLATE_POD) as response:
                assert response.status == 201, await response.text()
                template: dict[str, Any] = await response.json()
            async with http.delete("/api/v1/namespaces/bench-00/pods/template",
                                   params={"gracePeriodSeconds": "0"}) as response:
                assert response.status == 200, await response.text()
    finally:
        server.stop()
    return template


async def seed_pods(data_dir: str, template: dict[str, Any], count: int) -> None:
    store = await Store.open(os.path.join(data_dir, "store"))
    try:
        batch = 2000
        for start in range(0, count, batch):
            writes = []
            for i in range(start, min(count, start + batch)):
                pod = copy.deepcopy(template)
                meta = pod["metadata"]
                meta.pop("resourceVersion", None)
                meta.update(name=f"pod-{i:06d}", namespace=f"bench-{i % NAMESPACES:02d}", uid=str(uuid.uuid4()))
                meta["labels"]["app"] = f"web-{i % 50:02d}"
                writes.append(store.create(f"{PODS}{meta['namespace']}/{meta['name']}", pod))
            await asyncio.gather(*writes)
    finally:
        await store.close()


# -- LIST ---------------------------------------------------------------------------------------------

@dataclass
class ListResult:
    unsharded: float
    quarter_cold: float
    quarter_warm: float
    unsharded_items: int
    quarter_items: int


class _Items(msgspec.Struct):
    items: list[msgspec.Raw] = []  # counted, not decoded


async def timed_list(http: aiohttp.ClientSession, params: dict[str, str]) -> tuple[float, int]:
    """Seconds until the whole body is read, and the number of items in it."""
    started = time.perf_counter()
    async with http.get("/api/v1/pods", params=params) as response:
        body = await response.read()
        assert response.status == 200, body[:300]
    elapsed = time.perf_counter() - started
    return elapsed, len(msgspec.json.decode(body, type=_Items).items)


async def list_case(url: str, repeats: int) -> ListResult:
    async with aiohttp.ClientSession(url, timeout=aiohttp.ClientTimeout(total=600)) as http:
        await timed_list(http, {})  # warm the page cache and the allocator
        cold, quarter_items = await timed_list(http, {"shardSelector": QUARTER})  # fills the hash memo
        unsharded, warm = [], []
        for _ in range(repeats):  # interleaved, so drift in the machine's load hits both alike
            seconds, items = await timed_list(http, {})
            unsharded.append(seconds)
            seconds, _ = await timed_list(http, {"shardSelector": QUARTER})
            warm.append(seconds)
    return ListResult(statistics.median(unsharded), cold, statistics.median(warm), items, quarter_items)


# -- WATCH --------------------------------------------------------------------------------------------

@dataclass
class Watcher:
    selector: str | None  # a server-side shard, or None for the whole stream
    keep: tuple[int, int] | None = None  # a client-side shard: the replica filters for itself
    received: int = 0  # bytes
    events: int = 0
    lines: list[bytes] = field(default_factory=list)  # what a client-side replica still has to filter

    @property
    def kept(self) -> int:
        """Events this replica keeps. A client-side replica decodes every event and hashes its uid;
        that runs after the measured window, so a slow Python reader cannot slow the server."""
        if self.keep is None:
            return self.events
        low, high = self.keep
        return sum(low <= fnv1a64(json.loads(line)["object"]["metadata"]["uid"].encode()) < high
                   for line in self.lines)


def watchers_for(mode: str, groups: int) -> list[Watcher]:
    """The mode's watchers, `groups` times over: independent consumers, each a full set."""
    if mode == "one unsharded":
        return [Watcher(None) for _ in range(groups)]
    if mode == "4 server-side shards":
        return [Watcher(text) for _ in range(groups) for text in quarter_selectors()]
    if mode == "4 client-side shards":
        return [Watcher(None, keep=(i << 62, (i + 1) << 62)) for _ in range(groups) for i in range(4)]
    return []


@dataclass
class WatchRun:
    mode: str
    watchers: list[Watcher]
    cpu: float = 0.0  # the server's CPU seconds while the events were written and delivered
    events: int = 0
    wall: float = 0.0
    baseline: WatchRun | None = None  # the no-watcher run just before this one

    @property
    def cpu_per_second(self) -> float:
        return self.cpu / self.wall if self.wall else math.nan

    @property
    def added(self) -> float:
        """CPU seconds per second the watchers added to the writes alone, measured back to back
        so that the machine's drift (other work on its cores) cancels out."""
        assert self.baseline is not None
        return self.cpu_per_second - self.baseline.cpu_per_second


async def read_watch(http: aiohttp.ClientSession, watcher: Watcher, rv: str, ready: asyncio.Event) -> None:
    params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "3600"}
    if watcher.selector:
        params["shardSelector"] = watcher.selector
    async with http.get("/api/v1/pods", params=params) as response:
        assert response.status == 200, await response.text()
        ready.set()
        buffer = b""
        async for chunk in response.content.iter_any():
            watcher.received += len(chunk)
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            watcher.events += len(lines)
            if watcher.keep is not None:
                watcher.lines += lines


async def watch_case(server: ServerProcess, mode: str, rate: float, seconds: float, burst: int,
                     groups: int) -> WatchRun:
    run = WatchRun(mode, watchers_for(mode, groups))
    async with aiohttp.ClientSession(server.url, connector=aiohttp.TCPConnector(limit=0)) as http:
        async with http.get("/api/v1/namespaces/bench-00/pods", params={"limit": "1"}) as response:
            rv = (await response.json())["metadata"]["resourceVersion"]
        readiness = [asyncio.Event() for _ in run.watchers]
        readers = [asyncio.create_task(read_watch(http, w, rv, ready)) for w, ready in zip(run.watchers, readiness)]
        for ready in readiness:
            await ready.wait()
        cpu_before, wall_before = server.cpu_seconds(), time.perf_counter()
        run.events = await server.write(rate, seconds, burst)
        expected = run.events * (len(run.watchers) if mode.endswith("client-side shards") else groups)
        deadline = time.perf_counter() + 30
        while sum(w.events for w in run.watchers) < expected and time.perf_counter() < deadline:
            await asyncio.sleep(0.005)  # until every event has reached its watchers
        run.wall = time.perf_counter() - wall_before
        run.cpu = server.cpu_seconds() - cpu_before
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    return run


# -- report -------------------------------------------------------------------------------------------

@dataclass
class Line:
    case: str
    ours: str
    anchor: str
    ratio: float | None
    target: str
    passed: bool | None


def median_added(runs: list[WatchRun]) -> float:
    return statistics.median(run.added for run in runs)


def lines_for(listing: ListResult, runs: dict[str, list[WatchRun]]) -> list[Line]:
    out = []
    for label, seconds in (("hash memo cold", listing.quarter_cold), ("memo warm", listing.quarter_warm)):
        ratio = seconds / listing.unsharded
        out.append(Line(f"LIST one quarter shard ({label})", f"{seconds:.3f} s", f"{listing.unsharded:.3f} s unsharded",
                        ratio, "<= 0.35x", ratio <= 0.35))
    one = median_added(runs["one unsharded"])
    for mode in MODES[2:]:
        added = median_added(runs[mode])
        server_side = mode.startswith("4 server")
        out.append(Line(f"WATCH server CPU added, {mode}", f"{1000 * added:.1f} ms/s",
                        f"{1000 * one:.1f} ms/s one unsharded", added / one if one > 0 else math.nan,
                        "<= 1.3x" if server_side else "(context)", added / one <= 1.3 if server_side else None))
    whole = runs["one unsharded"][-1].watchers[0].received
    for mode in MODES[2:]:
        shares = [w.received / whole if whole else math.nan for w in runs[mode][-1].watchers]
        server_side = mode.startswith("4 server")
        out.append(Line(f"WATCH bytes per replica, {mode}", f"{min(shares):.2f}..{max(shares):.2f} of whole",
                        f"{whole / 1e6:.1f} MB whole stream", statistics.mean(shares),
                        "~0.25x" if server_side else "(context)",
                        all(0.2 <= share <= 0.3 for share in shares) if server_side else None))
    return out


def print_table(rows: list[Line]) -> None:
    header = ("case", "haru", "anchor", "ratio", "target", "verdict")
    table = [header] + [(r.case, r.ours, r.anchor, "-" if r.ratio is None else f"{r.ratio:.2f}x", r.target,
                         "-" if r.passed is None else ("PASS" if r.passed else "FAIL")) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for i, row in enumerate(table):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * width for width in widths))


def print_report(args: argparse.Namespace, listing: ListResult, runs: dict[str, list[WatchRun]]) -> None:
    rates = [run.events / run.wall for mode_runs in runs.values() for run in mode_runs]
    print(f"\nbench.sharding: {args.pods} pods; watch events at {args.rate:g}/s asked, {min(rates):.0f}..{max(rates):.0f}/s "
          f"delivered, started {args.burst} at a time; every watch mode {args.groups} consumers over; {args.rounds} "
          f"rounds of {args.seconds:g} s per mode, each after a no-watcher run (median of the differences); "
          f"{os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; Python {sys.version.split()[0]}")
    print_table(lines_for(listing, runs))
    print(f"\nLIST items: unsharded {listing.unsharded_items}, quarter {listing.quarter_items}")
    for mode, mode_runs in runs.items():
        cpu = ", ".join(f"{1000 * run.added:.0f} (over {1000 * run.baseline.cpu_per_second:.0f})"
                        for run in mode_runs if run.baseline)
        ws = mode_runs[-1].watchers
        mb, kept = [w.received / 1e6 for w in ws], [w.kept for w in ws]
        print(f"WATCH {mode}: server CPU ms/s added by round {cpu}; last round's {len(ws)} watchers: "
              f"{min(mb):.1f}..{max(mb):.1f} MB, {min(w.events for w in ws)}..{max(w.events for w in ws)} events, "
              f"{min(kept)}..{max(kept)} kept")


async def main_async(args: argparse.Namespace) -> None:
    data_dir = tempfile.mkdtemp(prefix="haru-bench-sharding-")
    try:
        template = await make_template(data_dir)
        started = time.perf_counter()
        await seed_pods(data_dir, template, args.pods)
        print(f"seeded {args.pods} pods in {time.perf_counter() - started:.1f} s", flush=True)
        server = ServerProcess(data_dir)
        try:
            listing = await list_case(server.url, args.repeats)
            print(f"LIST: unsharded {listing.unsharded:.3f} s, quarter cold {listing.quarter_cold:.3f} s, "
                  f"warm {listing.quarter_warm:.3f} s", flush=True)
            await server.write(args.rate, args.warmup, args.burst)  # the log and the heap settle first
            runs: dict[str, list[WatchRun]] = {mode: [] for mode in MODES[1:]}
            for _ in range(args.rounds):
                for mode in MODES[1:]:
                    baseline = await watch_case(server, MODES[0], args.rate, args.seconds, args.burst, args.groups)
                    run = await watch_case(server, mode, args.rate, args.seconds, args.burst, args.groups)
                    run.baseline = baseline
                    runs[mode].append(run)
                    print(f"WATCH {mode}: {1000 * run.added:.1f} ms/s server CPU over the writes' "
                          f"{1000 * baseline.cpu_per_second:.1f} ({run.events} events in {run.wall:.1f} s)", flush=True)
        finally:
            server.stop()
        print_report(args, listing, runs)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sharding", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10k pods, 1 round of 3 s per watch run")
    parser.add_argument("--pods", type=int, default=None)
    parser.add_argument("--rate", type=float, default=1000.0, help="watch events per second")
    parser.add_argument("--seconds", type=float, default=None, help="length of each watch mode's write phase")
    parser.add_argument("--repeats", type=int, default=None, help="LIST timings per side (median)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of the watch modes (median)")
    parser.add_argument("--burst", type=int, default=10, help="writes started together (about one commit)")
    parser.add_argument("--groups", type=int, default=4,
                        help="independent consumers per watch mode: lifts what watchers cost above the noise")
    parser.add_argument("--warmup", type=float, default=None, help="seconds of writes before measuring")
    parser.add_argument("--serve", metavar="DATA_DIR", help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args(argv)
    if args.serve:
        event_loop.run(serve(args.serve))
        return
    args.pods = args.pods or (10_000 if args.quick else 100_000)
    args.seconds = args.seconds or (3.0 if args.quick else 6.0)
    args.repeats = args.repeats or (2 if args.quick else 5)
    args.rounds = args.rounds or (1 if args.quick else 5)
    args.warmup = args.warmup if args.warmup is not None else (2.0 if args.quick else 30.0)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
