"""One node's running DRA driver: what the hollow kubelet starts, asks while it runs pods, and stops.

`start(client, node, devices)` parses the node's `devices` mapping, starts `publisher.publish`
(and, for a node with NICs, the attach loop that answers their binding conditions) as tasks,
and returns a `Driver`; a node without devices gets None. The kubelet asks the driver for a
container's environment, its `allocatedResourcesStatus`, and what `nodes/shell.py` shows
(`nvidia-smi -L` lines, `/dev` entries). `claims` may be keyed by the pod's claim names or by the
ResourceClaims' own names: the objects' names are what count.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import aclosing
from typing import Any

from client import errors
from client.resources import Resource
from client.rest import RestClient
from nodes.devices import binding, claims as claims_mod, container, health, inventory, publisher
from nodes.devices.config import DevicesConfig, parse

log = logging.getLogger(__name__)
RESOURCE_CLAIMS = Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim")


ATTACH_ATTEMPTS = 5  # a delayed attach re-reads its claim after this many conflicts at most


def _by_name(claims: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {obj["metadata"]["name"]: obj for obj in claims.values() if isinstance(obj, dict) and obj.get("metadata")}


class Driver:
    def __init__(self, client: RestClient, node: dict[str, Any], config: DevicesConfig,
                 registry: health.HealthRegistry | None = None) -> None:
        self.client = client
        self.node_name = node["metadata"]["name"]
        self.config = config
        self.inventory = inventory.build(self.node_name, config)
        self.registry = registry or health.REGISTRY
        self.health = self.registry.node(self.node_name)
        self.uuids = container.uuids(self.inventory)
        self._tasks: list[asyncio.Task[None]] = []
        self._delayed: dict[str, asyncio.Task[None]] = {}  # claim uid -> its attach, due after the delay
        self._node = node

    def start(self) -> "Driver":
        name = self.node_name
        self._tasks.append(asyncio.create_task(
            publisher.publish(self.client, self._node, self.config, registry=self.registry), name=f"slices/{name}"))
        if self.inventory.nics:
            self._tasks.append(asyncio.create_task(self._attach_loop(), name=f"nic-attach/{name}"))
        return self

    async def stop(self) -> None:
        self._tasks.extend(self._delayed.values())
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    def held(self, pod: dict[str, Any], cont: dict[str, Any], claims: dict[str, Any]) -> list[claims_mod.Held]:
        return claims_mod.container_results(cont, pod, _by_name(claims))

    def container_env(self, pod: dict[str, Any], cont: dict[str, Any], claims: dict[str, Any]) -> dict[str, str]:
        return container.container_env(self.held(pod, cont, claims), self.inventory)

    def allocated_resources_status(self, pod: dict[str, Any], cont: dict[str, Any],
                                   claims: dict[str, Any]) -> list[dict[str, Any]] | None:
        status = health.allocated_resources_status(cont, pod, _by_name(claims), self.health, self.uuids)
        return status or None

    def shell_devices(self, pod: dict[str, Any], cont: dict[str, Any], claims: dict[str, Any]) -> tuple[list[str], list[str]]:
        """(`nvidia-smi -L` lines, `/dev` entries) for `shell.Context.gpu_lines` / `dev_entries`."""
        shown = container.visible([h.result for h in self.held(pod, cont, claims)], self.inventory)
        return container.nvidia_smi_list(shown), container.dev_entries(shown)

    async def _attach_loop(self) -> None:
        """Answer the binding conditions of claims allocated this node's NICs (the scheduler waits)."""
        while True:
            try:
                listed = await self.client.list(RESOURCE_CLAIMS)
                for claim in listed.get("items") or []:
                    await self._attach(claim)
                rv = (listed.get("metadata") or {}).get("resourceVersion", "")
                async with aclosing(self.client.watch(RESOURCE_CLAIMS, resource_version=rv,
                                                      timeout_seconds=300)) as events:
                    async for event in events:
                        if event.get("type") in ("ADDED", "MODIFIED"):
                            await self._attach(event["object"])
            except asyncio.CancelledError:
                raise
            except errors.APIError as err:
                if not (errors.is_expired(err) or errors.is_conflict(err)):
                    log.warning("node %s: NIC attach loop: %s", self.node_name, err)
                await asyncio.sleep(publisher.RETRY_SECONDS)
            except Exception:
                log.exception("node %s: NIC attach loop failed", self.node_name)
                await asyncio.sleep(publisher.RETRY_SECONDS)

    async def _attach(self, claim: dict[str, Any]) -> None:
        delay = self.config.nic_attach_delay
        if delay and binding.attach_status(claim, self.node_name) is not None:
            # A NIC that takes a while to attach: answer later, from the claim as it is then.
            uid = claim["metadata"].get("uid", "")
            if uid not in self._delayed:
                meta = claim["metadata"]
                task = asyncio.create_task(self._attach_later(meta["name"], meta.get("namespace"), uid, delay),
                                           name=f"nic-attach/{self.node_name}/{meta['name']}")
                self._delayed[uid] = task
            return
        await self._attach_now(claim)

    async def _attach_later(self, name: str, namespace: str | None, uid: str, delay: int) -> None:
        try:
            await asyncio.sleep(delay)
            # Changes that arrived meanwhile were not queued (the uid was pending), so read the
            # claim afresh, and again after a conflict, instead of waiting for another event.
            for _ in range(ATTACH_ATTEMPTS):
                claim = await self.client.get(RESOURCE_CLAIMS, name, namespace)
                if claim["metadata"].get("uid") != uid:
                    return
                patch = binding.attach_status(claim, self.node_name, fail=self.config.nic_attach_fails)
                if patch is None:
                    return
                patch["metadata"] = {"resourceVersion": claim["metadata"]["resourceVersion"]}
                try:
                    await self.client.patch(RESOURCE_CLAIMS, name, patch, namespace, subresource="status")
                    return
                except errors.APIError as err:
                    if not errors.is_conflict(err):
                        raise
        except errors.APIError as err:
            if not errors.is_not_found(err):
                log.warning("node %s: NIC attach of %s: %s", self.node_name, name, err)
        finally:
            self._delayed.pop(uid, None)

    async def _attach_now(self, claim: dict[str, Any]) -> None:
        patch = binding.attach_status(claim, self.node_name, fail=self.config.nic_attach_fails)
        if patch is None:
            return
        meta = claim["metadata"]
        patch["metadata"] = {"resourceVersion": meta["resourceVersion"]}  # a stale view must not overwrite
        try:
            await self.client.patch(RESOURCE_CLAIMS, meta["name"], patch, meta.get("namespace"), subresource="status")
        except errors.APIError as err:
            if not (errors.is_conflict(err) or errors.is_not_found(err)):
                raise


async def start(client: RestClient, node: dict[str, Any], devices: dict[str, Any] | DevicesConfig | None, *,
                registry: health.HealthRegistry | None = None) -> Driver | None:
    config = devices if isinstance(devices, DevicesConfig) else parse(devices)
    if config.empty:
        return None
    return Driver(client, node, config, registry).start()
