"""What `haru up` prints once the cluster is ready: one screen, no scrolling.

`render(...)` is pure: the endpoint and kubeconfig, the nodes by pool (count, instance type, cpu
and memory, GPUs, racks), the GPU total, and the feature gates whose value here differs from
upstream's default (haru turns alpha and beta on: ARCHITECTURE principle 6). `wait_nodes_ready`
polls the API until every expected Node has Ready=True. Called by `cluster/cli.py`.
"""

from __future__ import annotations

import asyncio
import importlib.util
import textwrap
from collections import Counter

from apiserver.features import KNOWN, FeatureGates
from client.resources import NODES
from client.rest import RestClient
from nodes import pools



def _product(model: str) -> str:
    """The productName the driver publishes for a model (nodes/devices/presets.py), else the key."""
    try:
        from nodes.devices import presets
    except ImportError:
        return model
    preset = presets.MODELS.get(model)
    return preset.product_name if preset is not None else model


async def wait_nodes_ready(client: RestClient, names: list[str], timeout: float = 30.0) -> list[str]:
    """The expected nodes that are not Ready when the timeout ends (empty: all are)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    missing = set(names)
    while missing and loop.time() < deadline:
        try:
            listed = await client.list(NODES)
        except Exception:  # noqa: BLE001 - not up yet: ask again
            listed = {"items": []}
        for node in listed.get("items") or []:
            conditions = (node.get("status") or {}).get("conditions") or []
            if any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
                missing.discard(node["metadata"]["name"])
        if missing:
            await asyncio.sleep(0.05)
    return sorted(missing)


def _gpu_text(shape: pools.NodeShape) -> str:
    return f"{shape.gpu_count}× {shape.gpu_model.upper()}" if shape.gpu_count else "no GPUs"


def render(*, url: str, kubeconfig: str, shapes: list[pools.NodeShape], gates: FeatureGates, seconds: float,
           not_ready: list[str] | None = None, scheduler_url: str | None = None) -> str:
    lines = [f"haru is ready in {seconds:.1f}s: Kubernetes v1.36 on {len(shapes)} hollow nodes",
             f"  endpoint    {url}",
             f"  kubeconfig  {kubeconfig}   (export KUBECONFIG={kubeconfig})"]
    if scheduler_url:
        lines.append(f"  scheduler   {scheduler_url}/metrics, {scheduler_url}/healthz")
    by_pool: dict[str, list[pools.NodeShape]] = {}
    for shape in shapes:
        by_pool.setdefault(shape.pool, []).append(shape)
    lines.append("  nodes" if shapes else "  nodes       none (pods stay Pending)")
    for pool, members in by_pool.items():
        first = members[0]
        racks = ", ".join(sorted({s.rack for s in members}))
        names = " ".join(s.name for s in members) if len(members) <= 4 else f"{members[0].name} … {members[-1].name}"
        lines.append(f"    {pool:<8} {len(members)} × {first.instance_type:<14} {first.cpu} cpu, {first.memory}, "
                     f"{_gpu_text(first)}; racks {racks}; {names}")
    gpus: Counter[str] = Counter()
    for shape in shapes:
        if shape.gpu_count:
            gpus[shape.gpu_model] += shape.gpu_count
    if gpus:
        total = ", ".join(f"{n}× {_product(m)}" for m, n in gpus.items())
        driver = ("DRA driver gpu.nvidia.com" if importlib.util.find_spec("nodes.devices") is not None
                  else "no DRA driver installed: no ResourceSlices")
        lines.append(f"  GPUs        {total} (virtual; {driver})")
    if not_ready:
        lines.append(f"  not Ready   {' '.join(not_ready)}")
    on = sorted(n for n, spec in KNOWN.items() if gates.enabled(n) and not spec.upstream_default)
    off = sorted(n for n, spec in KNOWN.items() if not gates.enabled(n) and spec.upstream_default)
    for label, names in (("on here, off upstream", on), ("off here, on upstream", off)):
        if names:
            wrapped = textwrap.wrap(", ".join(names), width=96, initial_indent=f"  gates {label}: ",
                                    subsequent_indent="    ")
            lines.extend(wrapped)
    return "\n".join(lines)
