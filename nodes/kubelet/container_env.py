"""A starting container's environment, as the kubelet builds it (`makeEnvironmentVariables`).

What it holds, in order:
- the image's PATH, HOSTNAME and the `kubernetes` service variables;
- `envFrom` (ConfigMaps and Secrets, with their prefix);
- `env`: a value with `$(VAR)` expanded, or a fieldRef to the pod's name, namespace, uid, labels,
  annotations, node, service account or IPs, or a ConfigMap or Secret key;
- what the DRA driver adds for the pod's claims (`devices_seam.container_env`).
A missing ConfigMap, Secret or key that is not optional raises `ConfigError` with the kubelet's
message; the container then waits in CreateContainerConfigError (`pod_worker.py`).
"""

from __future__ import annotations

import base64
import re
from typing import Any

from client import errors
from client.resources import CONFIGMAPS, SECRETS
from client.rest import RestClient

Obj = dict[str, Any]
_SERVICE_IP = "10.96.0.1"  # the first address of kubeadm's default service CIDR, 10.96.0.0/12
_BASE = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "KUBERNETES_SERVICE_HOST": _SERVICE_IP, "KUBERNETES_SERVICE_PORT": "443", "KUBERNETES_SERVICE_PORT_HTTPS": "443",
    "KUBERNETES_PORT": f"tcp://{_SERVICE_IP}:443", "KUBERNETES_PORT_443_TCP": f"tcp://{_SERVICE_IP}:443",
    "KUBERNETES_PORT_443_TCP_PROTO": "tcp", "KUBERNETES_PORT_443_TCP_PORT": "443",
    "KUBERNETES_PORT_443_TCP_ADDR": _SERVICE_IP,
}


class ConfigError(Exception):
    pass


class _Sources:
    """ConfigMaps and Secrets read once per container start (the kubelet caches them too)."""

    def __init__(self, client: RestClient, namespace: str) -> None:
        self.client, self.namespace = client, namespace
        self._cache: dict[tuple[str, str], Obj | None] = {}

    async def get(self, kind: str, name: str) -> dict[str, str] | None:
        key = (kind, name)
        if key not in self._cache:
            resource = CONFIGMAPS if kind == "configmap" else SECRETS
            try:
                self._cache[key] = await self.client.get(resource, name, self.namespace)
            except errors.APIError as exc:
                if not errors.is_not_found(exc):
                    raise
                self._cache[key] = None
        obj = self._cache[key]
        if obj is None:
            return None
        if kind == "secret":
            return {k: base64.b64decode(v).decode(errors="replace") for k, v in (obj.get("data") or {}).items()}
        return {**(obj.get("binaryData") or {}), **(obj.get("data") or {})}


def expand(value: str, env: dict[str, str]) -> str:
    """$(VAR) references to variables defined before, as the kubelet expands them ($$ escapes)."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), value)


async def resolve(client: RestClient, pod: Obj, spec: Obj, fields: dict[str, str]) -> dict[str, str]:
    meta = pod["metadata"]
    namespace = meta.get("namespace") or "default"
    sources = _Sources(client, namespace)
    env = {**_BASE, "HOSTNAME": meta["name"]}
    for source in spec.get("envFrom") or []:
        for kind, ref in (("configmap", source.get("configMapRef")), ("secret", source.get("secretRef"))):
            if not ref:
                continue
            data = await sources.get(kind, ref.get("name", ""))
            if data is None:
                if ref.get("optional"):
                    continue
                raise ConfigError(f'{kind} "{ref.get("name", "")}" not found')
            prefix = source.get("prefix") or ""
            env.update({prefix + k: v for k, v in data.items()})
    for item in spec.get("env") or []:
        name = item.get("name")
        if not name:
            continue
        if "valueFrom" not in item:
            env[name] = expand(str(item.get("value") or ""), env)
            continue
        source = item["valueFrom"] or {}
        if "fieldRef" in source:
            path = (source["fieldRef"] or {}).get("fieldPath", "")
            match = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
            env[name] = (meta.get(match.group(1)) or {}).get(match.group(2), "") if match else fields.get(path, "")
            continue
        for kind, key_ref, title in (("configmap", source.get("configMapKeyRef"), "ConfigMap"),
                                     ("secret", source.get("secretKeyRef"), "Secret")):
            if not key_ref:
                continue
            data = await sources.get(kind, key_ref.get("name", ""))
            optional = bool(key_ref.get("optional"))
            if data is None:
                if optional:
                    break
                raise ConfigError(f'{kind} "{key_ref.get("name", "")}" not found')
            key = key_ref.get("key", "")
            if key not in data:
                if optional:
                    break
                raise ConfigError(f"couldn't find key {key} in {title} {namespace}/{key_ref.get('name', '')}")
            env[name] = data[key]
            break
    return env
