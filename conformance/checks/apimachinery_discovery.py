"""Discovery behaviours of upstream's test/e2e/apimachinery: discovery.go (each group's versions and
resources), aggregated_discovery.go (the apidiscovery.k8s.io/v2 documents, built-ins and CRDs),
server_version.go, and table_conversion.go (406 for a Table the backend cannot produce)."""

from __future__ import annotations

import re

from client import errors
from conformance.checks._confupstream_support import refused
from conformance.context import Context, Obj
from conformance.registry import conformance

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
BUILTIN = {("", "v1"): {"pods", "services", "configmaps", "namespaces", "nodes"},
           ("apps", "v1"): {"deployments", "replicasets", "statefulsets", "daemonsets"},
           ("batch", "v1"): {"jobs", "cronjobs"}, ("apiextensions.k8s.io", "v1"): {"customresourcedefinitions"}}


async def _served(ctx: Context, path: str, group: str) -> Obj | None:
    """GET a group's discovery document; None when the group went away meanwhile (a CRD another
    check just deleted), which is churn, not a failure to serve. Any other error fails."""
    try:
        return await ctx.api.get_path(path)
    except errors.APIError as err:
        if errors.is_not_found(err):
            groups = (await ctx.api.get_path("/apis"))["groups"]
            if all(g["name"] != group for g in groups):
                return None
        raise


@conformance("[sig-api-machinery] Discovery should validate PreferredVersion for each APIGroup [Conformance]",
             area="api-machinery")
async def preferred_versions(ctx: Context) -> None:
    groups = (await ctx.api.get_path("/apis"))["groups"]
    assert groups, "/apis lists no groups"
    for group in groups:
        if group["name"].endswith("example.com"):
            continue
        preferred = group.get("preferredVersion") or {}
        versions = [v["groupVersion"] for v in group.get("versions") or []]
        assert preferred.get("groupVersion") in versions, \
            f"group {group['name']}'s preferredVersion {preferred} is not one of its versions {versions}"
        detail = await _served(ctx, f"/apis/{group['name']}", group["name"])
        if detail is None:
            continue
        assert detail.get("preferredVersion") == preferred, \
            f"/apis/{group['name']} prefers {detail.get('preferredVersion')}, /apis says {preferred}"


@conformance("[sig-api-machinery] Discovery should locate the groupVersion and a resource within each APIGroup "
             "[Conformance]", area="api-machinery")
async def group_versions(ctx: Context) -> None:
    groups = (await ctx.api.get_path("/apis"))["groups"]
    for group in groups:
        for version in group.get("versions") or []:
            listing = await _served(ctx, f"/apis/{version['groupVersion']}", group["name"])
            if listing is None:
                continue
            assert listing.get("groupVersion") == version["groupVersion"], \
                f"/apis/{version['groupVersion']} names groupVersion {listing.get('groupVersion')}"
            assert listing.get("resources"), f"/apis/{version['groupVersion']} lists no resource"


def _aggregated_resources(docs: list[Obj]) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    for doc in docs:
        assert doc.get("kind") == "APIGroupDiscoveryList" and doc.get("apiVersion") == "apidiscovery.k8s.io/v2", \
            f"not an aggregated discovery document: {str(doc)[:200]}"
        for group in doc.get("items") or []:
            name = (group.get("metadata") or {}).get("name") or ""
            for version in group.get("versions") or []:
                found[(name, version["version"])] = {r["resource"] for r in version.get("resources") or []}
    return found


async def _aggregated(ctx: Context, accept: str) -> dict[tuple[str, str], set[str]]:
    core = await ctx.api.request("GET", "/api", accept=accept)
    groups = await ctx.api.request("GET", "/apis", accept=accept)
    return _aggregated_resources([core, groups])


def _check_builtins(found: dict[tuple[str, str], set[str]]) -> None:
    for key, resources in BUILTIN.items():
        missing = resources - found.get(key, set())
        assert not missing, f"aggregated discovery of {key[0] or 'core'}/{key[1]} lacks {sorted(missing)}"


@conformance("[sig-api-machinery] AggregatedDiscovery should support raw aggregated discovery endpoint Accept "
             "headers [Conformance]", area="api-machinery")
async def aggregated_accept_headers(ctx: Context) -> None:
    for accept in (AGGREGATED_V2, f"{AGGREGATED_V2},application/json",
                   "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.9,application/json;q=0.8"):
        _check_builtins(await _aggregated(ctx, accept))
    # Without asking for it, the old unaggregated shape.
    plain = await ctx.api.get_path("/apis")
    assert plain.get("kind") == "APIGroupList", f"/apis without an aggregated Accept answered {plain.get('kind')}"


@conformance("[sig-api-machinery] AggregatedDiscovery should support aggregated discovery interface [Conformance]",
             area="api-machinery")
async def aggregated_interface(ctx: Context) -> None:
    found = await _aggregated(ctx, f"{AGGREGATED_V2},application/json")
    _check_builtins(found)
    # Every group/version /apis lists is in the aggregated document with the same resources.
    for group in (await ctx.api.get_path("/apis"))["groups"]:
        for version in group["versions"]:
            listing = await _served(ctx, f"/apis/{version['groupVersion']}", group["name"])
            if listing is None:
                continue
            plain = {r["name"] for r in listing["resources"] if "/" not in r["name"]}
            assert plain <= found.get((group["name"], version["version"]), set()), \
                f"aggregated discovery of {version['groupVersion']} lacks {plain - found.get((group['name'], version['version']), set())}"


@conformance("[sig-api-machinery] server version should find the server version [Conformance]", area="api-machinery")
async def server_version(ctx: Context) -> None:
    version = await ctx.api.get_path("/version")
    assert re.fullmatch(r"[0-9]+", version.get("major") or ""), f"major is not an integer: {version}"
    assert re.fullmatch(r"[0-9]+", version.get("minor") or ""), f"minor is not an integer: {version}"
    assert version.get("gitVersion", "").startswith("v"), f"gitVersion looks wrong: {version}"


@conformance("[sig-api-machinery] Servers with support for Table transformation should return a 406 for a backend "
             "which does not implement metadata [Conformance]", area="api-machinery")
async def table_406(ctx: Context) -> None:
    # A SelfSubjectAccessReview is created, never stored, so no Table of it exists.
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}}
    await refused(ctx.api.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review,
                                  accept="application/json;as=Table;v=v1;g=meta.k8s.io"), 406,
                  what="a SelfSubjectAccessReview asked for as a Table")
