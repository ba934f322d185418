"""The API objects a pod references: kube's VisitPodSecretNames, VisitPodConfigmapNames and kin.

Read by the NodeRestriction plugin (a mirror pod may reference none) and by the Node authorizer's
graph (`apiserver/authorization/node_graph.py`: a node reaches what its pods reference). Pure
functions over the pod dict: every container list (init, regular, ephemeral), volumes (plain,
projected, and the plugins' secretRef fields), env and envFrom.
"""

from __future__ import annotations

from typing import Any, Iterator


def _containers(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(field) or ()


def secret_names(pod: dict[str, Any]) -> set[str]:
    """kube's VisitPodSecretNames: pull secrets, volume sources, env and envFrom of every container."""
    spec = pod.get("spec") or {}
    names = {s.get("name") for s in spec.get("imagePullSecrets") or () if s.get("name")}
    for volume in spec.get("volumes") or ():
        if (volume.get("secret") or {}).get("secretName"):
            names.add(volume["secret"]["secretName"])
        for source in (volume.get("projected") or {}).get("sources") or ():
            if (source.get("secret") or {}).get("name"):
                names.add(source["secret"]["name"])
        for plugin, value in volume.items():
            if isinstance(value, dict) and plugin not in ("secret", "projected", "configMap"):
                for field in ("secretRef", "nodePublishSecretRef"):
                    if (value.get(field) or {}).get("name"):
                        names.add(value[field]["name"])
                if plugin == "azureFile" and value.get("secretName"):
                    names.add(value["secretName"])
    for container in _containers(spec):
        for env in container.get("env") or ():
            ref = (env.get("valueFrom") or {}).get("secretKeyRef") or {}
            if ref.get("name"):
                names.add(ref["name"])
        for source in container.get("envFrom") or ():
            if (source.get("secretRef") or {}).get("name"):
                names.add(source["secretRef"]["name"])
    return names


def configmap_names(pod: dict[str, Any]) -> set[str]:
    """kube's VisitPodConfigmapNames: volume sources (plain and projected), env and envFrom."""
    spec = pod.get("spec") or {}
    names: set[str] = set()
    for volume in spec.get("volumes") or ():
        if (volume.get("configMap") or {}).get("name"):
            names.add(volume["configMap"]["name"])
        for source in (volume.get("projected") or {}).get("sources") or ():
            if (source.get("configMap") or {}).get("name"):
                names.add(source["configMap"]["name"])
    for container in _containers(spec):
        for env in container.get("env") or ():
            ref = (env.get("valueFrom") or {}).get("configMapKeyRef") or {}
            if ref.get("name"):
                names.add(ref["name"])
        for source in container.get("envFrom") or ():
            if (source.get("configMapRef") or {}).get("name"):
                names.add(source["configMapRef"]["name"])
    return names


def claim_names(pod: dict[str, Any]) -> set[str]:
    """PersistentVolumeClaims: named ones, and `<pod>-<volume>` for generic ephemeral volumes."""
    pod_name = (pod.get("metadata") or {}).get("name", "")
    names: set[str] = set()
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if (volume.get("persistentVolumeClaim") or {}).get("claimName"):
            names.add(volume["persistentVolumeClaim"]["claimName"])
        if "ephemeral" in volume:
            names.add(f"{pod_name}-{volume.get('name', '')}")
    return names


def resource_claim_names(pod: dict[str, Any]) -> set[str]:
    """ResourceClaims: named in the spec, generated ones from status, and the extended-resource claim."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    names = {c["resourceClaimName"] for c in spec.get("resourceClaims") or () if c.get("resourceClaimName")}
    names |= {c["resourceClaimName"] for c in status.get("resourceClaimStatuses") or () if c.get("resourceClaimName")}
    extended = (status.get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    if extended:
        names.add(extended)
    return names
