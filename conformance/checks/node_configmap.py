"""ConfigMap behaviours of upstream's test/e2e/common/node/configmap.go that need no running container."""

from __future__ import annotations

from client import errors
from conformance.context import Context
from conformance.registry import conformance


@conformance("[sig-node] ConfigMap should run through a ConfigMap lifecycle [Conformance]", area="node")
async def configmap_lifecycle(ctx: Context) -> None:
    # Create with a static label, patch, find it by label across all namespaces, delete by collection.
    name = ctx.name("test-configmap")
    await ctx.create({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": name, "labels": {"test-configmap-static": "true"}},
                      "data": {"valueName": "value"}})
    await ctx.patch("v1", "ConfigMap", name, {"metadata": {"labels": {"test-configmap": "patched"}},
                                              "data": {"valueName": "value1"}})
    fetched = await ctx.get("v1", "ConfigMap", name)
    assert fetched["data"] == {"valueName": "value1"}, f"the patch did not change data: {fetched['data']}"
    assert fetched["metadata"]["labels"].get("test-configmap") == "patched", "the patch did not add the label"
    configmaps = ctx.api.resource("v1", "ConfigMap")
    everywhere = await ctx.api.list(configmaps, None, label_selector="test-configmap-static=true")
    found = [cm for cm in everywhere["items"] if cm["metadata"]["namespace"] == ctx.namespace]
    assert [cm["metadata"]["name"] for cm in found] == [name], f"a label selector across namespaces found {found}"
    assert found[0]["data"] == {"valueName": "value1"}
    await ctx.api.delete_collection(configmaps, ctx.namespace, label_selector="test-configmap-static=true")
    try:
        await ctx.get("v1", "ConfigMap", name)
    except errors.APIError as err:
        assert errors.is_not_found(err), f"expected NotFound after deletecollection, got {err}"
    else:
        raise AssertionError("the ConfigMap is still there after deletecollection")


@conformance("[sig-node] ConfigMap should fail to create ConfigMap with empty key [Conformance]", area="node")
async def configmap_empty_key(ctx: Context) -> None:
    try:
        await ctx.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": ctx.name("cm-empty-key")},
                          "data": {"": "value"}})
    except errors.APIError as err:
        assert err.code == 422 and err.reason == "Invalid", f"expected 422 Invalid, got {err}"
    else:
        raise AssertionError("a ConfigMap with an empty data key was accepted")
