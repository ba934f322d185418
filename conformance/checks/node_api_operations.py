"""Upstream's RuntimeClass API test (test/e2e/common/node/runtimeclass.go), through `api_operations`."""

from __future__ import annotations

from conformance.checks._confupstream_support import api_operations
from conformance.context import Context
from conformance.registry import conformance


@conformance("[sig-node] RuntimeClass should support RuntimeClasses API operations [Conformance]", area="node")
async def runtimeclass_api(ctx: Context) -> None:
    await api_operations(ctx, lambda name: {
        "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": "e2e-handler"})
