"""Upstream's CSIStorageCapacity API test (test/e2e/storage/csistoragecapacity.go), through `api_operations`."""

from __future__ import annotations

from conformance.checks._confupstream_support import api_operations
from conformance.context import Context
from conformance.registry import conformance


@conformance("[sig-storage] CSIStorageCapacity should support CSIStorageCapacities API operations [Conformance]",
             area="storage")
async def csistoragecapacity_api(ctx: Context) -> None:
    await api_operations(ctx, lambda name: {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": name},
        "storageClassName": "e2e-storage-class", "capacity": "1Gi",
        "nodeTopology": {"matchLabels": {"topology.example.com/node": "e2e"}}})
