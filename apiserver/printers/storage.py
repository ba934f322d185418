"""Printers for storage.k8s.io kinds (upstream printers.go).

Owns StorageClass (with the ` (default)` name suffix), VolumeAttributesClass, CSIDriver, CSINode,
CSIStorageCapacity and VolumeAttachment rows; unset fields read as their defaults (reclaim policy
Delete, binding mode Immediate, attachRequired true, lifecycle mode Persistent). Called through
`apiserver/printers/__init__.py`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from apiserver.printers import cells
from apiserver.printers.printer import AGE, NAME, Doc, Printer, col

_DEFAULT_CLASS = ("storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class")
_DEFAULT_ATTRIBUTES_CLASS = "storage.kubernetes.io/is-default-class"


def _annotated(obj: dict[str, Any], keys: tuple[str, ...]) -> bool:
    annotations = cells.meta(obj).get("annotations") or {}
    return any(annotations.get(k) == "true" for k in keys)


def _storage_class(obj: dict[str, Any], now: datetime) -> list[Any]:
    name = cells.name(obj) + (" (default)" if _annotated(obj, _DEFAULT_CLASS) else "")
    return [
        name, obj.get("provisioner", ""), obj.get("reclaimPolicy") or "Delete", obj.get("volumeBindingMode") or "Immediate",
        bool(obj.get("allowVolumeExpansion")), cells.age(obj, now),
    ]


def _volume_attributes_class(obj: dict[str, Any], now: datetime) -> list[Any]:
    name = cells.name(obj) + (" (default)" if _annotated(obj, (_DEFAULT_ATTRIBUTES_CLASS,)) else "")
    return [name, obj.get("driverName", ""), cells.age(obj, now)]


def _csi_driver(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    attach = spec.get("attachRequired")
    tokens = spec.get("tokenRequests")
    modes = spec.get("volumeLifecycleModes") or ["Persistent"]
    return [
        cells.name(obj), True if attach is None else bool(attach), bool(spec.get("podInfoOnMount")),
        bool(spec.get("storageCapacity")), "<unset>" if tokens is None else ",".join(t.get("audience", "") for t in tokens),
        bool(spec.get("requiresRepublish")), ",".join(modes), cells.age(obj, now),
    ]


def _volume_attachment(obj: dict[str, Any], now: datetime) -> list[Any]:
    spec = obj.get("spec") or {}
    return [
        cells.name(obj), spec.get("attacher", ""), cells.dig(spec, "source", "persistentVolumeName") or "",
        spec.get("nodeName", ""), bool(cells.dig(obj, "status", "attached")), cells.age(obj, now),
    ]


PRINTERS = {
    ("storage.k8s.io", "storageclasses"): Printer(
        (NAME, col("Provisioner", Doc("storage.v1.StorageClass", "provisioner")),
         col("ReclaimPolicy", Doc("storage.v1.StorageClass", "reclaimPolicy")),
         col("VolumeBindingMode", Doc("storage.v1.StorageClass", "volumeBindingMode")),
         col("AllowVolumeExpansion", Doc("storage.v1.StorageClass", "allowVolumeExpansion")), AGE),
        _storage_class,
    ),
    ("storage.k8s.io", "volumeattributesclasses"): Printer(
        (NAME, col("DriverName", Doc("storage.v1.VolumeAttributesClass", "driverName")), AGE),
        _volume_attributes_class,
    ),
    ("storage.k8s.io", "csidrivers"): Printer(
        (NAME, col("AttachRequired", Doc("storage.v1.CSIDriverSpec", "attachRequired"), type="boolean"),
         col("PodInfoOnMount", Doc("storage.v1.CSIDriverSpec", "podInfoOnMount"), type="boolean"),
         col("StorageCapacity", Doc("storage.v1.CSIDriverSpec", "storageCapacity"), type="boolean"),
         col("TokenRequests", Doc("storage.v1.CSIDriverSpec", "tokenRequests")),
         col("RequiresRepublish", Doc("storage.v1.CSIDriverSpec", "requiresRepublish"), type="boolean"),
         col("Modes", Doc("storage.v1.CSIDriverSpec", "volumeLifecycleModes")), AGE),
        _csi_driver,
    ),
    ("storage.k8s.io", "csinodes"): Printer(
        (NAME, col("Drivers", "Drivers indicates the number of CSI drivers registered on the node", type="integer"), AGE),
        lambda o, now: [cells.name(o), len(cells.dig(o, "spec", "drivers") or []), cells.age(o, now)],
    ),
    ("storage.k8s.io", "csistoragecapacities"): Printer(
        (NAME, col("StorageClassName", Doc("storage.v1.CSIStorageCapacity", "storageClassName")),
         col("Capacity", Doc("storage.v1.CSIStorageCapacity", "capacity"))),
        lambda o, now: [cells.name(o), o.get("storageClassName", ""), "<unset>" if o.get("capacity") is None else str(o["capacity"])],
    ),
    ("storage.k8s.io", "volumeattachments"): Printer(
        (NAME, col("Attacher", Doc("storage.v1.VolumeAttachmentSpec", "attacher"), format="name"),
         col("PV", Doc("storage.v1.VolumeAttachmentSource", "persistentVolumeName")),
         col("Node", Doc("storage.v1.VolumeAttachmentSpec", "nodeName")),
         col("Attached", Doc("storage.v1.VolumeAttachmentStatus", "attached"), type="boolean"), AGE),
        _volume_attachment,
    ),
}
