"""Printers for the control plane's own kinds: leases, runtime classes, storage versions, APIServices.

Owns Lease, LeaseCandidate, RuntimeClass, StorageVersion, StorageVersionMigration (its Status cell
is a best reading of a post-1.36 printer), kube-aggregator's APIService table and the `*/scale`
table (registered as group `autoscaling`, resource `scale`). Called through
`apiserver/printers/__init__.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers import cells
from apiserver.printers.printer import AGE, NAME, Doc, Printer, col


def _storage_version(obj: dict[str, Any], now: datetime) -> list[Any]:
    status = obj.get("status") or {}
    versions = status.get("storageVersions") or []
    shown = [f"{v.get('apiServerID', '')}={v.get('encodingVersion', '')}" for v in versions[:3]]
    return [
        cells.name(obj), status.get("commonEncodingVersion") or "<unset>", cells.list_with_more(shown, len(versions)),
        cells.age(obj, now),
    ]


def _migration(obj: dict[str, Any], now: datetime) -> list[Any]:
    resource = cells.dig(obj, "spec", "resource") or {}
    text = resource.get("resource", "")
    if resource.get("group"):
        text += "." + resource["group"]
    status = ""
    for kind in ("Succeeded", "Failed", "Running"):
        c = cells.condition(cells.dig(obj, "status", "conditions"), kind)
        if c is not None and c.get("status") == "True":
            status = kind
            break
    return [cells.name(obj), text, status]


def _api_service(obj: dict[str, Any], now: datetime) -> list[Any]:
    service = cells.dig(obj, "spec", "service")
    where = "Local" if not service else f"{service.get('namespace', '')}/{service.get('name', '')}"
    available = "Unknown"
    c = cells.condition(cells.dig(obj, "status", "conditions"), "Available")
    if c is not None:
        state = c.get("status", "")
        available = f"{state} ({c['reason']})" if state != "True" and c.get("reason") else state
    return [cells.name(obj), where, available, cells.age(obj, now)]


PRINTERS = {
    ("coordination.k8s.io", "leases"): Printer(
        (NAME, col("Holder", Doc("coordination.v1.LeaseSpec", "holderIdentity")), AGE),
        lambda o, now: [cells.name(o), cells.dig(o, "spec", "holderIdentity") or "", cells.age(o, now)],
    ),
    ("coordination.k8s.io", "leasecandidates"): Printer(
        # Upstream looks two of these descriptions up on ObjectMeta, where they do not exist.
        (NAME, col("LeaseName", Doc("coordination.v1beta1.LeaseCandidateSpec", "leaseName")), col("BinaryVersion"),
         col("EmulationVersion"), AGE),
        lambda o, now: [
            cells.name(o), cells.dig(o, "spec", "leaseName") or "", cells.dig(o, "spec", "binaryVersion") or "",
            cells.dig(o, "spec", "emulationVersion") or "", cells.age(o, now),
        ],
    ),
    ("node.k8s.io", "runtimeclasses"): Printer(
        (NAME, col("Handler"), AGE), lambda o, now: [cells.name(o), o.get("handler", ""), cells.age(o, now)],
    ),
    ("internal.apiserver.k8s.io", "storageversions"): Printer(
        (NAME, col("CommonEncodingVersion", Doc("apiserverinternal.v1alpha1.StorageVersionStatus", "commonEncodingVersion")),
         col("StorageVersions", Doc("apiserverinternal.v1alpha1.StorageVersionStatus", "storageVersions")), AGE),
        _storage_version,
    ),
    ("storagemigration.k8s.io", "storageversionmigrations"): Printer(
        (col("Name", Doc("meta.v1.ObjectMeta", "name")), col("Resource", "Fully qualified resource to migrate"),
         col("Status", "Status of the migration")),
        _migration,
    ),
    ("apiregistration.k8s.io", "apiservices"): Printer(
        (NAME, col("Service", "The reference to the service that hosts this API endpoint."),
         col("Available", "Whether this service is available."), AGE),
        _api_service,
    ),
    ("autoscaling", "scale"): Printer(
        (col("Name", Doc("meta.v1.ObjectMeta", "name")), col("Desired", Doc("autoscaling.v1.ScaleSpec", "replicas"), type="integer"),
         col("Available", Doc("autoscaling.v1.ScaleStatus", "replicas"), type="integer"), AGE),
        lambda o, now: [
            cells.name(o), cells.integer(cells.dig(o, "spec", "replicas")), cells.integer(cells.dig(o, "status", "replicas")),
            cells.age(o, now),
        ],
    ),
}
