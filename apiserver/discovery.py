"""Discovery documents: what `/api`, `/apis` and `/api[s]/<group>/<version>` answer.

Owns the response bodies of both discovery flavours, rendered from the registry:
aggregated discovery (`apidiscovery.k8s.io/v2` APIGroupDiscoveryList, what kubectl 1.36 and helm 4
ask for first) and legacy discovery (APIVersions, APIGroupList, APIGroup, APIResourceList, what
the Python clients, kopf and `kubectl auth can-i` read). `negotiate` picks the flavour from the
Accept header. The lead's handlers serve these bodies; the aggregated ones must go out with
`AGGREGATED_CONTENT_TYPE` or kubectl reads them as legacy JSON and finds no resources.
"""

from __future__ import annotations

import hashlib
import weakref
from typing import Any

import msgspec

from apiserver import registry

AGGREGATED_GROUP = "apidiscovery.k8s.io"
AGGREGATED_VERSION = "v2"
AGGREGATED_KIND = "APIGroupDiscoveryList"
AGGREGATED_CONTENT_TYPE = f"application/json;g={AGGREGATED_GROUP};v={AGGREGATED_VERSION};as={AGGREGATED_KIND}"

# Rendered aggregated documents per registry: (generation, legacy) → (body, etag).
_aggregated_cache: weakref.WeakKeyDictionary[registry.Registry, dict[tuple[int, bool], tuple[bytes, str]]] = (
    weakref.WeakKeyDictionary()
)


def negotiate(accept_header: str | None) -> str:
    """"aggregated" when the client accepts APIGroupDiscoveryList v2 before plain JSON, else "legacy".

    Media ranges are tried by q-value, then in the order given. A range naming another discovery
    version (v2beta1) is skipped; anything else (application/json, */*, nothing) means legacy.
    A `profile` parameter is ignored: haru has no peer servers, so `profile=nopeer` changes nothing.
    """
    ranges = []
    for position, item in enumerate((accept_header or "").split(",")):
        media, *raw_params = (part.strip() for part in item.split(";"))
        if not media:
            continue
        params = {}
        for raw in raw_params:
            name, _, value = raw.partition("=")
            params[name.strip().lower()] = value.strip().strip('"')
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 1.0
        if q > 0:
            ranges.append((-q, position, media.lower(), params))
    for _, _, media, params in sorted(ranges):
        if params.get("as") == AGGREGATED_KIND:
            if (media == "application/json" and params.get("g") == AGGREGATED_GROUP
                    and params.get("v") == AGGREGATED_VERSION):
                return "aggregated"
            continue
        return "legacy"
    return "legacy"


# -- aggregated discovery (v2) ------------------------------------------------------------
def aggregated(reg: registry.Registry, *, legacy: bool) -> bytes:
    """APIGroupDiscoveryList for `/api` (legacy=True: the core group) or `/apis` (named groups)."""
    return _aggregated_entry(reg, legacy)[0]


def aggregated_etag(reg: registry.Registry, *, legacy: bool) -> str:
    """A quoted ETag for the document `aggregated` returns; it changes with the served set."""
    return _aggregated_entry(reg, legacy)[1]


def _aggregated_entry(reg: registry.Registry, legacy: bool) -> tuple[bytes, str]:
    per_reg = _aggregated_cache.setdefault(reg, {})
    key = (reg.generation, legacy)
    entry = per_reg.get(key)
    if entry is None:
        groups = [g for g in reg.groups() if (g == "") == legacy]
        body = msgspec.json.encode({
            "kind": AGGREGATED_KIND,
            "apiVersion": f"{AGGREGATED_GROUP}/{AGGREGATED_VERSION}",
            "metadata": {},
            "items": [_group_discovery(reg, g) for g in groups],
        })
        entry = (body, '"' + hashlib.sha256(body).hexdigest().upper() + '"')
        per_reg.clear()  # older generations are never asked for again
        per_reg[key] = entry
    return entry


def _group_discovery(reg: registry.Registry, group: str) -> dict[str, Any]:
    return {
        # The core group is nameless; the real server sends an empty metadata for it.
        "metadata": {"name": group} if group else {},
        "versions": [
            {
                "version": version,
                "resources": [_resource_discovery(r) for r in reg.resources(group, version)],
                "freshness": "Current",
            }
            for version in reg.served_versions(group)
        ],
    }


def _response_kind(info: registry.ResourceInfo, group: str, version: str, kind: str) -> dict[str, str]:
    # As the real server does, group and version are left empty when they are the resource's own.
    same = (group, version) == (info.group, info.version)
    return {"group": "" if same else group, "version": "" if same else version, "kind": kind}


def _resource_discovery(info: registry.ResourceInfo) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resource": info.resource,
        "responseKind": _response_kind(info, info.group, info.version, info.kind),
        "scope": "Namespaced" if info.namespaced else "Cluster",
        "singularResource": info.singular,
        "verbs": list(info.verbs),
    }
    if info.short_names:
        out["shortNames"] = list(info.short_names)
    if info.categories:
        out["categories"] = list(info.categories)
    if info.subresources:
        out["subresources"] = [
            {
                "subresource": sub.name,
                "responseKind": _response_kind(info, sub.group, sub.version, sub.kind),
                "verbs": list(sub.verbs),
            }
            for sub in sorted(info.subresources.values(), key=lambda s: s.name)
        ]
    return out


# -- legacy discovery ---------------------------------------------------------------------
def api_versions(server_address: str = "") -> dict[str, Any]:
    """APIVersions for `/api`. `server_address` is host:port as clients reach this server."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        # Required by the Python client's model; one CIDR covering every client, like upstream.
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_entry(reg: registry.Registry, group: str) -> dict[str, Any]:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in reg.served_versions(group)]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def api_group_list(reg: registry.Registry) -> dict[str, Any]:
    """APIGroupList for `/apis`: every named group, preferred version first."""
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group_entry(reg, g) for g in reg.groups() if g],
    }


def api_group(reg: registry.Registry, group: str) -> dict[str, Any] | None:
    """APIGroup for `/apis/<group>`, or None when the group is not served."""
    if not group or group not in reg.groups():
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(reg, group)}


def api_resource_list(reg: registry.Registry, group: str, version: str) -> dict[str, Any] | None:
    """APIResourceList for `/api/v1` or `/apis/<group>/<version>`, or None when not served."""
    infos = reg.resources(group, version)
    if not infos:
        return None
    resources: list[dict[str, Any]] = []
    for info in infos:
        entry: dict[str, Any] = {
            "name": info.resource,
            "singularName": info.singular,
            "namespaced": info.namespaced,
            "kind": info.kind,
            "verbs": list(info.verbs),
        }
        if info.short_names:
            entry["shortNames"] = list(info.short_names)
        if info.categories:
            entry["categories"] = list(info.categories)
        if info.storage_version_hash:
            entry["storageVersionHash"] = info.storage_version_hash
        resources.append(entry)
        for sub in sorted(info.subresources.values(), key=lambda s: s.name):
            sub_entry: dict[str, Any] = {
                "name": f"{info.resource}/{sub.name}",
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": sub.kind,
                "verbs": list(sub.verbs),
            }
            if (sub.group, sub.version) != (info.group, info.version):
                sub_entry["group"] = sub.group
                sub_entry["version"] = sub.version
            resources.append(sub_entry)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }
