"""The benchmark's test object: one realistic Pod, about 2.2 KB as compact JSON.

Both sides of `bench.storage` store exactly these values under exactly these keys, so the only
difference measured is the store. `pod_object(i)` varies name, uid and a few strings per index;
`pod_key(ns, i)` gives `/registry/pods/ns-NN/pod-NNNNNN`.
"""

from __future__ import annotations

import uuid
from typing import Any


def pod_key(namespace_index: int, index: int) -> str:
    return f"/registry/pods/ns-{namespace_index:02d}/pod-{index:06d}"


def namespace_prefix(namespace_index: int) -> str:
    return f"/registry/pods/ns-{namespace_index:02d}/"


def pod_object(namespace_index: int, index: int) -> dict[str, Any]:
    """A Pod as a ReplicaSet would create it and a kubelet would report it running."""
    name = f"pod-{index:06d}"
    namespace = f"ns-{namespace_index:02d}"
    uid = str(uuid.UUID(int=(namespace_index << 64) | index | (0x4 << 76)))
    rs_hash = f"{(index * 2654435761) % 0xFFFFFFFF:08x}"[:10]
    app = f"web-{index % 50:02d}"
    node = f"node-{index % 40:03d}"
    ip = f"10.{(index >> 16) & 255}.{(index >> 8) & 255}.{index & 255}"
    started = "2026-05-01T10:00:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid,
            "creationTimestamp": started,
            "labels": {"app": app, "pod-template-hash": rs_hash},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"{app}-{rs_hash}",
                    "uid": str(uuid.UUID(int=(index * 7919) | (0x4 << 76))),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "web",
                       "imagePullPolicy": "IfNotPresent",
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                    "env": [
                        {"name": "APP_NAME", "value": app},
                        {"name": "LOG_LEVEL", "value": "info"},
                        {
                            "name": "POD_IP",
                            "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}},
                        },
                    ],
                    "resources": {
                        "requests": {"cpu": "250m", "memory": "256Mi"},
                        "limits": {"cpu": "1", "memory": "512Mi"},
                    },
                    "volumeMounts": [
                        {"name": "config", "mountPath": "/etc/web"},
                        {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True},
                    ],
                },
                {
                    "name": "log-shipper",
                       "imagePullPolicy": "IfNotPresent",
                    "resources": {
                        "requests": {"cpu": "50m", "memory": "64Mi"},
                        "limits": {"memory": "128Mi"},
                    },
                    "volumeMounts": [{"name": "varlog", "mountPath": "/var/log"}],
                },
            ],
            "volumes": [
                {"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}},
                {"name": "varlog", "emptyDir": {}},
                {
                    "name": "kube-api-access",
                    "projected": {
                        "defaultMode": 420,
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                        ],
                    },
                },
            ],
            "restartPolicy": "Always",
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "nodeName": node,
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": started},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": started},
            ],
            "hostIP": "192.0.2.10",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": started,
            "containerStatuses": [
                {"name": "web", "ready": True, "restartCount": 0, "started": True,
                 "state": {"running": {"startedAt": started}}},
                {"name": "log-shipper", "ready": True, "restartCount": 0, "started": True,
                 "state": {"running": {"startedAt": started}}},
            ],
        },
    }
