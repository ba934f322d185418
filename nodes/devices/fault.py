"""`haru fault gpu NODE/DEVICE unhealthy|healthy`: mark a virtual device, over the API.

`set_device_health(rest, "gpu-node-0/gpu-3", "unhealthy", effect="NoExecute")` checks that the node
publishes that device (its `gpu.nvidia.com` ResourceSlices), then rewrites the Node's
`haru.dev/gpu-health` annotation (health.py) with an optimistic-concurrency patch, retried on a
conflict. The nodes process, wherever it runs, sees the Node change and taints the device.
`cluster/cli.py` calls it (or `main`, also `python -m nodes.devices.fault`) and prints the
returned line; `FaultCommandError` is a user error (exit 1).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any, Sequence

from client import errors, kubeconfig
from client.rest import RestClient
from nodes.devices import health
from nodes.devices.publisher import NODES, RESOURCE_SLICES
from nodes.devices import names

STATES = {"unhealthy": "Unhealthy", "healthy": "Healthy", "unknown": "Unknown"}
ATTEMPTS = 5


class FaultCommandError(Exception):
    pass


def parse_target(target: str) -> tuple[str, str]:
    node, sep, device = target.partition("/")
    if not sep or not node or not device or "/" in device:
        raise FaultCommandError(f"expected NODE/DEVICE such as gpu-node-0/gpu-3, got {target!r}")
    return node, device


async def published_devices(rest: RestClient, node: str) -> list[str]:
    found: list[str] = []
    for driver in names.DRIVERS:
        listed = await rest.list(RESOURCE_SLICES, field_selector=f"spec.nodeName={node},spec.driver={driver}")
        for item in listed.get("items") or []:
            found.extend(d["name"] for d in (item.get("spec") or {}).get("devices") or [])
    return found


async def set_device_health(rest: RestClient, target: str, state: str, *, effect: str | None = None,
                            xid: int | None = None, message: str = "") -> str:
    node_name, device = parse_target(target)
    health_value = STATES.get(state.lower())
    if health_value is None:
        raise FaultCommandError(f"state must be one of {', '.join(STATES)}, got {state!r}")
    default_effect = health.DEFAULT_EFFECT[health_value]
    effect = effect or default_effect
    if effect not in health.EFFECTS:
        raise FaultCommandError(f"effect must be one of {', '.join(health.EFFECTS)}, got {effect!r}")
    fault: Any = health_value
    if effect != default_effect or xid is not None or message:
        fault = {"health": health_value, "effect": effect}
        if xid is not None:
            fault["xid"] = xid
        if message:
            fault["message"] = message
    health.parse_fault(fault)  # the same check the driver applies

    try:
        node = await rest.get(NODES, node_name)
    except errors.APIError as err:
        if errors.is_not_found(err):
            raise FaultCommandError(f'node "{node_name}" not found') from None
        raise
    devices = await published_devices(rest, node_name)
    if device not in devices:
        listed = ", ".join(devices) if devices else "none"
        raise FaultCommandError(f'node "{node_name}" publishes no device "{device}" (devices: {listed})')

    for _ in range(ATTEMPTS):
        meta = node["metadata"]
        text = (meta.get("annotations") or {}).get(health.ANNOTATION) or "{}"
        try:
            faults = json.loads(text)
        except json.JSONDecodeError:
            faults = {}  # a broken annotation is replaced, not merged into
        if not isinstance(faults, dict):
            faults = {}
        if health_value == "Healthy":
            faults.pop(device, None)
        else:
            faults[device] = fault
        value = health.encode_annotation(faults) if faults else None
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"], "annotations": {health.ANNOTATION: value}}}
        try:
            await rest.patch(NODES, node_name, patch)
            break
        except errors.APIError as err:
            if not errors.is_conflict(err):
                raise
            node = await rest.get(NODES, node_name)
    else:
        raise FaultCommandError(f'node "{node_name}" kept changing; gave up after {ATTEMPTS} attempts')

    if health_value == "Healthy":
        return f"node/{node_name} {device}: Healthy (taint removed)"
    key = health.parse_fault(fault).key(device)
    shown = f"{key}={xid}" if xid is not None and not names.is_nic(device) else key
    return f"node/{node_name} {device}: {health_value} (taint {shown}:{effect})"


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(prog="haru fault", description="Mark a virtual device unhealthy or healthy.")
    cli.add_argument("--kubeconfig", required=True)
    kinds = cli.add_subparsers(dest="kind", required=True)
    add_gpu_command(kinds)
    return cli


def add_gpu_command(kinds: Any) -> None:
    """The `gpu NODE/DEVICE STATE` command and its flags, for this module's CLI and `haru fault`."""
    gpu = kinds.add_parser("gpu", help="a GPU, MIG device or NIC of a hollow node")
    gpu.add_argument("target", metavar="NODE/DEVICE")
    gpu.add_argument("state", choices=sorted(STATES))
    gpu.add_argument("--effect", choices=health.EFFECTS,
                     help="the device taint's effect: NoSchedule for unhealthy, None for unknown by default; "
                          "NoExecute evicts pods that do not tolerate it")
    gpu.add_argument("--xid", type=int, help="report an XID error (taint gpu.nvidia.com/xid=<XID>)")
    gpu.add_argument("--message", default="", help="the message pods see in allocatedResourcesStatus")


async def _run(args: argparse.Namespace) -> str:
    async with RestClient(kubeconfig.load(args.kubeconfig)) as rest:
        return await set_device_health(rest, args.target, args.state, effect=args.effect, xid=args.xid,
                                       message=args.message)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        print(asyncio.run(_run(args)))
    except FaultCommandError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except errors.APIError as err:
        print(f"Error from server: {err.message or err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
