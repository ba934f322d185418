"""A found solution written as a claim's `status.allocation`, as upstream's Allocate returns it.

`devices.results` has one entry per chosen device (request name `<request>/<subrequest>` for
firstAvailable, adminAccess, tolerations, shareID and consumedCapacity for shared devices, the
binding conditions when that gate is on). `devices.config` lists each used class's config once
(source FromClass, the requests using it), then the claim's config entries, each once per
chosen request it names (FromClaim, as upstream); a config covering every request drops `requests`. The
nodeSelector pins the claim to the node when a device is node-local or binds to the node, merges
the slices' node selectors otherwise, and is left out when the devices are usable everywhere.
`allocationTimestamp` is the plugin's to set. Called by `allocator.py`.
"""

from __future__ import annotations

import uuid
from typing import Any

from scheduler.dra import capacity

# The allocator's search state (`allocator._Search`): node, claims, chosen requests and devices.
Search = Any


def new_share_id() -> str:
    """A share of a device that allows multiple allocations gets its own UID."""
    return str(uuid.uuid4())


def _result(search: Search, taken: Any) -> dict[str, Any]:
    device, request = taken.device, taken.request
    driver, pool, name = device.id
    out: dict[str, Any] = {"request": request.name, "driver": driver, "pool": pool, "device": name}
    if request.admin:
        out["adminAccess"] = True
    if request.tolerations:
        out["tolerations"] = [dict(t) for t in request.tolerations]
    if search.features["DRADeviceBindingConditions"]:
        if device.binding_conditions:
            out["bindingConditions"] = list(device.binding_conditions)
        if device.binding_failure_conditions:
            out["bindingFailureConditions"] = list(device.binding_failure_conditions)
    if taken.share:
        out["shareID"] = new_share_id()
        if taken.amounts:
            out["consumedCapacity"] = capacity.status_form(device, taken.amounts)
    return out


def _config(claim: Any, chosen: list[Any]) -> list[dict[str, Any]]:
    config: list[dict[str, Any]] = []
    by_class: dict[str, list[dict[str, Any]]] = {}
    for request in chosen:
        entries = by_class.get(request.class_name)
        if entries is not None:
            for entry in entries:
                entry["requests"].append(request.name)
            continue
        entries = by_class[request.class_name] = []
        for item in (request.device_class.get("spec") or {}).get("config") or []:
            entry = {"source": "FromClass", "requests": [request.name],
                     **{k: v for k, v in item.items() if k != "requests"}}
            entries.append(entry)
            config.append(entry)
    for item in ((claim.obj.get("spec") or {}).get("devices") or {}).get("config") or []:
        names = item.get("requests") or []
        body = {k: v for k, v in item.items() if k != "requests"}
        if not names:
            config.append({"source": "FromClaim", **body})
            continue
        # As upstream: the entry is added once for each request it names by its own name or by
        # the chosen subrequest (so an entry naming two requests appears twice).
        for request in chosen:
            if request.base in names or (request.sub and request.name in names):
                config.append({"source": "FromClaim", "requests": list(names), **body})
    for entry in config:
        if "requests" in entry and len(entry["requests"]) == len(claim.requests):
            del entry["requests"]
    return config


def _node_selector(search: Search, taken_list: list[Any]) -> dict[str, Any] | None:
    node_name = (search.node.get("metadata") or {}).get("name", "")
    fields: list[dict[str, Any]] = []
    expressions: list[dict[str, Any]] = []
    for taken in taken_list:
        device, entry = taken.device, taken.device.slice
        if entry.per_device:
            local, selector = device.node_name, device.node_selector
        else:
            local, selector = entry.node_name, entry.node_selector
        if local or device.binds_to_node:
            return {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
        terms = (selector or {}).get("nodeSelectorTerms") or []
        if len(terms) == 1:
            for requirement in terms[0].get("matchFields") or []:
                _add_requirement(fields, requirement)
            for requirement in terms[0].get("matchExpressions") or []:
                _add_requirement(expressions, requirement)
    if not fields and not expressions:
        return None
    term: dict[str, Any] = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _add_requirement(into: list[dict[str, Any]], requirement: dict[str, Any]) -> None:
    values = set(requirement.get("values") or [])
    for existing in into:
        if (existing.get("key") == requirement.get("key") and existing.get("operator") == requirement.get("operator")
                and set(existing.get("values") or []) == values):
            return
    into.append(dict(requirement))


def allocation(search: Search, index: int) -> dict[str, Any]:
    claim = search.claims[index]
    taken_list = search.taken[index]
    devices: dict[str, Any] = {"results": [_result(search, taken) for taken in taken_list]}
    config = _config(claim, search.chosen[index])
    if config:
        devices["config"] = config
    out: dict[str, Any] = {"devices": devices}
    selector = _node_selector(search, taken_list)
    if selector is not None:
        out["nodeSelector"] = selector
    return out
