"""`python -m bench.go_shape`: what Go's JSON shape costs a create, beside the create it is part of.

The Go-shape pass (`apiserver/go_shape.py`: omitempty, Go field order, sorted maps) runs twice on
every write of a built-in kind: on the object as decoded and defaulted, before the field manager,
and on the object already in shape after admission and the strategy (the binding re-shapes only
the top two levels). This times them on the create benchmark's Pod (as a ReplicaSet posts it,
after defaulting) and on a small ConfigMap, and beside them the anchor: the whole
`writing.prepare_create` for the same Pod in the same process, with the pass switched off and on,
interleaved in rounds. No HTTP, no storage: those costs are the same either way.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from typing import Any, Callable

import msgspec

from apiserver import context, go_shape, kinds, requestinfo, runner, writing
from bench import _http_cases


def _per_call_us(fn: Callable[[Any], None], inputs: list[Any]) -> float:
    start = time.perf_counter()
    for item in inputs:
        fn(item)
    return (time.perf_counter() - start) / len(inputs) * 1e6


def _pod_bytes() -> bytes:
    before, after = _http_cases.pod_to_create("default")
    return before + b"bench-pod" + after


def _passes(loops: int, rounds: int) -> dict[str, list[float]]:
    plan = go_shape.plan_for("v1", "Pod")
    cm_plan = go_shape.plan_for("v1", "ConfigMap")
    assert plan is not None and cm_plan is not None
    strategy = kinds.strategy_for("", "pods", namespaced=True, has_status=True)
    pod = msgspec.json.decode(_pod_bytes())
    strategy.default(pod)
    defaulted = msgspec.json.encode(pod)
    configmap = msgspec.json.encode({"apiVersion": "v1", "kind": "ConfigMap", "data": {"b": "2", "a": "1"},
                                     "metadata": {"name": "c", "namespace": "default", "labels": {"app": "x"}}})
    found: dict[str, list[float]] = {"full pass, fresh Pod": [], "full pass, Pod in shape": [],
                                     "top two levels, Pod": [], "full pass, fresh ConfigMap": []}
    for _ in range(rounds):
        pods = [msgspec.json.decode(defaulted) for _ in range(loops)]
        found["full pass, fresh Pod"].append(_per_call_us(lambda o: go_shape.shape(o, plan), pods))
        found["full pass, Pod in shape"].append(_per_call_us(lambda o: go_shape.shape(o, plan, fill=True), pods))
        found["top two levels, Pod"].append(_per_call_us(lambda o: go_shape.shape_top(o, plan), pods))
        cms = [msgspec.json.decode(configmap) for _ in range(loops)]
        found["full pass, fresh ConfigMap"].append(_per_call_us(lambda o: go_shape.shape(o, cm_plan), cms))
    return found


async def _prepare_create(loops: int, rounds: int) -> dict[str, list[float]]:
    """The anchor: prepare_create on the Pod, pass off and on, in one server, interleaved."""
    found: dict[str, list[float]] = {"prepare_create, no Go shape": [], "prepare_create, Go shape": []}
    with tempfile.TemporaryDirectory(prefix="bench-go-shape-") as data:
        running = await runner.start(data + "/data", port=0)
        try:
            ep = context.endpoint_for(running.server, requestinfo.parse("POST", "/api/v1/namespaces/default/pods"))
            raw = _pod_bytes()
            shaping = writing._go_shape
            for _ in range(rounds):
                for label, plan_of in (("prepare_create, no Go shape", lambda _ep: None),
                                       ("prepare_create, Go shape", shaping)):
                    writing._go_shape = plan_of  # type: ignore[assignment]
                    pods = [msgspec.json.decode(raw) for _ in range(loops)]
                    found[label].append(_per_call_us(lambda o: writing.prepare_create(ep, o, {}, "bench"), pods))
            writing._go_shape = shaping  # type: ignore[assignment]
        finally:
            await running.stop()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.go_shape", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run (a few seconds)")
    args = parser.parse_args(argv)
    loops, rounds = (300, 3) if args.quick else (1000, 15)
    rows = {**_passes(loops * 3, rounds), **asyncio.run(_prepare_create(loops, rounds))}
    print(f"{'case':34} | {'median us':>9} | {'min us':>7}")
    for label, values in rows.items():
        print(f"{label:34} | {statistics.median(values):9.1f} | {min(values):7.1f}")
    passes = statistics.median(rows["full pass, fresh Pod"]) + statistics.median(rows["full pass, Pod in shape"])
    with_shape = statistics.median(rows["prepare_create, Go shape"])
    without = statistics.median(rows["prepare_create, no Go shape"])
    print(f"the two passes: {passes:.1f} us of a Pod create; prepare_create median of {rounds} rounds: "
          f"{without:.1f} us without, {with_shape:.1f} us with ({(with_shape - without) / without:+.1%}); "
          "2 shared cores make the prepare_create rows noisy, the pass rows much less")
    return 0


if __name__ == "__main__":
    sys.exit(main())
