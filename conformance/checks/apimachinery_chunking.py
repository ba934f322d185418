"""API chunking (test/e2e/apimachinery/chunking.go): a list with `limit` answers pages no larger
than the limit, with `remainingItemCount` and a `continue` token, and the pages together are the
whole list at the first page's resourceVersion."""

from __future__ import annotations

from conformance.context import Context
from conformance.registry import conformance

TEMPLATES = 40
LIMIT = 7


@conformance("[sig-api-machinery] Servers with support for API chunking should return chunks of results for list "
             "calls [Conformance]", area="api-machinery")
async def chunked_lists(ctx: Context) -> None:
    templates = ctx.api.resource("v1", "PodTemplate")
    for i in range(TEMPLATES):
        await ctx.create({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": f"template-{i:04d}"},
                          "template": {"spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}})
    seen: list[str] = []
    token = ""
    first_version = ""
    while True:
        page = await ctx.api.list(templates, ctx.namespace, limit=LIMIT, continue_token=token)
        items = page["items"]
        meta = page["metadata"]
        assert len(items) <= LIMIT, f"a page of limit {LIMIT} held {len(items)} items"
        first_version = first_version or meta["resourceVersion"]
        assert meta["resourceVersion"] == first_version, \
            f"a later page has resourceVersion {meta['resourceVersion']}, the first had {first_version}"
        seen += [t["metadata"]["name"] for t in items]
        token = meta.get("continue") or ""
        left = TEMPLATES - len(seen)
        if not token:
            assert left == 0, f"the pages ended with {left} templates unseen"
            assert not meta.get("remainingItemCount"), f"the last page still counts {meta.get('remainingItemCount')}"
            break
        assert len(items) == LIMIT, f"a page before the last held only {len(items)} of {LIMIT}"
        assert meta.get("remainingItemCount") == left, \
            f"remainingItemCount is {meta.get('remainingItemCount')}, {left} templates are left"
    assert seen == sorted(f"template-{i:04d}" for i in range(TEMPLATES)), "the pages do not add up to the whole list"
    whole = await ctx.api.list(templates, ctx.namespace)
    assert len(whole["items"]) == TEMPLATES and not whole["metadata"].get("continue"), \
        "a list without limit did not answer everything at once"
