"""The test CRD: `widgets.example.com`, two versions, status and scale, columns, defaults, CEL.

Shared by the in-process tests in this folder and the real-client tests in `tests/e2e/test_crds.py`.
"""

from __future__ import annotations

import copy
from typing import Any

GROUP = "example.com"
NAME = "widgets.example.com"


def _schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["replicas"],
                "x-kubernetes-validations": [
                    {"rule": "self.replicas <= self.maxReplicas", "message": "replicas must not exceed maxReplicas"},
                    {"rule": "self.replicas >= 0 || !has(oldSelf.replicas)",
                     "messageExpression": "'replicas went negative: ' + string(self.replicas)"},
                ],
                "properties": {
                    "replicas": {"type": "integer", "minimum": 0},
                    "maxReplicas": {"type": "integer", "default": 10},
                    "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "blue"},
                    "size": {"type": "string", "pattern": "^[0-9]+(m|g)$", "maxLength": 5},
                    "port": {"x-kubernetes-int-or-string": True},
                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set",
                             "maxItems": 3},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                              "x-kubernetes-list-map-keys": ["name"],
                              "items": {"type": "object", "required": ["name"],
                                        "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                                 "x-kubernetes-preserve-unknown-fields": True},
                    "note": {"type": "string", "nullable": True},
                },
            },
            "status": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "selector": {"type": "string"},
                    "observedGeneration": {"type": "integer"},
                },
            },
        },
    }


def crd(*, scope: str = "Namespaced") -> dict[str, Any]:
    columns = [
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Color", "type": "string", "jsonPath": ".spec.color", "description": "the color"},
        {"name": "Ready", "type": "integer", "jsonPath": ".status.replicas", "priority": 1},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]
    version = {
        "served": True,
        "schema": {"openAPIV3Schema": _schema()},
        "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                 "statusReplicasPath": ".status.replicas",
                                                 "labelSelectorPath": ".status.selector"}},
        "additionalPrinterColumns": columns,
        "selectableFields": [{"jsonPath": ".spec.color"}],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {
            "group": GROUP,
            "scope": scope,
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"],
                      "categories": ["haru-test"]},
            "versions": [{**copy.deepcopy(version), "name": "v1", "storage": True},
                         {**copy.deepcopy(version), "name": "v2", "storage": False}],
        },
    }


def widget(name: str, version: str = "v1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Widget", "metadata": {"name": name},
            "spec": {"replicas": 1, **spec}}
