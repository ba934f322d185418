"""Secret behaviours of upstream's test/e2e/common/node/secrets.go that need no running container."""

from __future__ import annotations

import base64

from conformance.checks._confupstream_support import gone, refused
from conformance.context import Context
from conformance.registry import conformance


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@conformance("[sig-node] Secrets should fail to create secret due to empty secret key [Conformance]", area="node")
async def secret_empty_key(ctx: Context) -> None:
    await refused(ctx.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": ctx.name("secret-emptykey")},
                              "data": {"": _b64("value-1")}}), 422, "Invalid", "a Secret with an empty data key")


@conformance("[sig-node] Secrets should patch a secret [Conformance]", area="node")
async def secret_patch(ctx: Context) -> None:
    name = ctx.name("secret")
    await ctx.create({"apiVersion": "v1", "kind": "Secret",
                      "metadata": {"name": name, "labels": {"testsecret-constant": "true"}},
                      "data": {"key": _b64("value")}, "type": "Opaque"})
    secrets = ctx.api.resource("v1", "Secret")
    everywhere = await ctx.api.list(secrets, None, label_selector="testsecret-constant=true")
    mine = [s for s in everywhere["items"] if s["metadata"]["namespace"] == ctx.namespace]
    assert [s["metadata"]["name"] for s in mine] == [name], f"listing by label across namespaces found {mine}"
    await ctx.patch("v1", "Secret", name, {"metadata": {"labels": {"testsecret": "true"}},
                                           "data": {"key": _b64("value-patched")}})
    fetched = await ctx.get("v1", "Secret", name)
    assert fetched["data"] == {"key": _b64("value-patched")}, f"the patched data did not show: {fetched['data']}"
    assert fetched["metadata"]["labels"].get("testsecret") == "true", "the patched label did not show"
    await ctx.api.delete_collection(secrets, ctx.namespace, label_selector="testsecret-constant=true")
    await gone(ctx, "v1", "Secret", name)


@conformance("[sig-storage] Secrets should be immutable if `immutable` field is set [Conformance]", area="storage")
async def secret_immutable(ctx: Context) -> None:
    name = ctx.name("immutable")
    secret = await ctx.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
                               "data": {"data-1": _b64("value-1")}})
    secret["data"]["data-2"] = _b64("value-2")
    secret = await ctx.update(secret)
    secret["immutable"] = True
    secret = await ctx.update(secret)
    changed = {**secret, "data": {**secret["data"], "data-3": _b64("value-3")}}
    await refused(ctx.update(changed), 422, "Invalid", "changing the data of an immutable Secret")
    await refused(ctx.update({**secret, "immutable": False}), 422, "Invalid", "unsetting immutable on a Secret")
    secret["metadata"]["labels"] = {"label1": "value1"}
    relabelled = await ctx.update(secret)
    assert relabelled["metadata"]["labels"] == {"label1": "value1"}, "a label change of an immutable Secret did not show"
    await ctx.delete("v1", "Secret", name)
    await gone(ctx, "v1", "Secret", name)


@conformance("[sig-storage] ConfigMap should be immutable if `immutable` field is set [Conformance]", area="storage")
async def configmap_immutable(ctx: Context) -> None:
    name = ctx.name("immutable")
    cm = await ctx.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                           "data": {"data-1": "value-1"}})
    cm["data"]["data-2"] = "value-2"
    cm = await ctx.update(cm)
    cm["immutable"] = True
    cm = await ctx.update(cm)
    await refused(ctx.update({**cm, "data": {**cm["data"], "data-3": "value-3"}}), 422, "Invalid",
                  "changing the data of an immutable ConfigMap")
    await refused(ctx.update({**cm, "immutable": False}), 422, "Invalid", "unsetting immutable on a ConfigMap")
    cm["metadata"]["labels"] = {"label1": "value1"}
    relabelled = await ctx.update(cm)
    assert relabelled["metadata"]["labels"] == {"label1": "value1"}, "a label change of an immutable ConfigMap did not show"
    await ctx.delete("v1", "ConfigMap", name)
    await gone(ctx, "v1", "ConfigMap", name)
