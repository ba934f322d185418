"""PodTemplate behaviours of upstream's test/e2e/common/node/podtemplates.go: pure API, no kubelet."""

from __future__ import annotations

from conformance.checks._confupstream_support import gone
from conformance.context import Context, Obj
from conformance.registry import conformance


def _template(name: str, labels: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": name, "labels": labels},
            "template": {"spec": {"containers": [{"name": "nginx", "image": "registry.k8s.io/e2e-test-images/nginx:1.14-4"}]}}}


@conformance("[sig-node] PodTemplates should run the lifecycle of PodTemplates [Conformance]", area="node")
async def podtemplate_lifecycle(ctx: Context) -> None:
    name = ctx.name("podtemplate")
    await ctx.create(_template(name, {"podtemplate-static": "true"}))
    await ctx.patch("v1", "PodTemplate", name, {"metadata": {"labels": {"podtemplate": "patched"}}})
    fetched = await ctx.get("v1", "PodTemplate", name)
    assert fetched["metadata"]["labels"].get("podtemplate") == "patched", f"the patch did not show: {fetched['metadata']}"
    found = await ctx.list("v1", "PodTemplate", label_selector="podtemplate-static=true")
    assert [t["metadata"]["name"] for t in found["items"]] == [name], f"the label selector found {found['items']}"
    assert found["items"][0]["metadata"]["labels"]["podtemplate"] == "patched"
    await ctx.delete("v1", "PodTemplate", name)
    await gone(ctx, "v1", "PodTemplate", name)


@conformance("[sig-node] PodTemplates should delete a collection of pod templates [Conformance]", area="node")
async def podtemplate_delete_collection(ctx: Context) -> None:
    names = [ctx.name("podtemplate") for _ in range(3)]
    for name in names:
        await ctx.create(_template(name, {"podtemplate-set": "true"}))
    found = await ctx.list("v1", "PodTemplate", label_selector="podtemplate-set=true")
    assert len(found["items"]) == 3, f"expected 3 labelled templates, found {len(found['items'])}"
    await ctx.api.delete_collection(ctx.api.resource("v1", "PodTemplate"), ctx.namespace,
                                    label_selector="podtemplate-set=true")

    async def emptied() -> bool:
        return not (await ctx.list("v1", "PodTemplate", label_selector="podtemplate-set=true"))["items"]
    await ctx.eventually(emptied, what="the labelled pod templates to be deleted")


@conformance("[sig-node] PodTemplates should replace a pod template [Conformance]", area="node")
async def podtemplate_replace(ctx: Context) -> None:
    name = ctx.name("podtemplate")
    created = await ctx.create(_template(name, {}))
    created["metadata"]["annotations"] = {"updated": "true"}
    await ctx.update(created)
    fetched = await ctx.get("v1", "PodTemplate", name)
    assert (fetched["metadata"].get("annotations") or {}).get("updated") == "true", \
        f"the replaced template lacks the annotation: {fetched['metadata']}"
