"""One CRD as the server uses it: its names, scope, versions, and the registry rows it serves.

`from_crd(obj)` reads a stored CustomResourceDefinition (already validated by `crd_strategy.py`)
into a frozen `Definition`; `rows()` gives one `registry.ResourceInfo` per served version, with
the schema prepared for pruning (`row_schema`) and the subresources, printer columns and
selectable fields of that version. Called by `controller.py` when it establishes a CRD.
"""

from __future__ import annotations

import copy
import types
from dataclasses import dataclass, field
from typing import Any, Mapping

from apiserver import registry
from apiserver.crds import defaulting

OBJECT_META_REF = {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
_VERBS = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
_SUB_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class Version:
    name: str
    served: bool
    storage: bool
    schema: Mapping[str, Any]  # openAPIV3Schema as the CRD gives it ({} when absent)
    status: bool
    scale: Mapping[str, Any] | None
    columns: tuple[Mapping[str, Any], ...]
    selectable: tuple[str, ...]
    deprecation_warning: str | None
    has_defaults: bool = False  # whether reads must apply defaults (see output.py)


@dataclass(frozen=True)
class Definition:
    name: str
    uid: str
    group: str
    plural: str
    singular: str
    kind: str
    list_kind: str
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    namespaced: bool
    versions: tuple[Version, ...]
    terminating: bool = False
    _by_name: dict[str, Version] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update({v.name: v for v in self.versions})

    def version(self, name: str) -> Version | None:
        return self._by_name.get(name)

    def version_of(self, api_version: str) -> Version | None:
        """The version an object's apiVersion (`group/version`) names, if this CRD has it."""
        group, _, name = api_version.rpartition("/")
        return self._by_name.get(name) if group == self.group else None

    @property
    def storage_version(self) -> Version:
        return next(v for v in self.versions if v.storage)

    @property
    def served_versions(self) -> list[Version]:
        return [v for v in self.versions if v.served]

    def rows(self) -> list[registry.ResourceInfo]:
        return [self.row(v) for v in self.served_versions]

    def row(self, version: Version) -> registry.ResourceInfo:
        subresources: dict[str, registry.SubresourceInfo] = {}
        if version.status:
            subresources["status"] = registry.SubresourceInfo("status", self.kind, self.group, version.name,
                                                              _SUB_VERBS)
        if version.scale is not None:
            subresources["scale"] = registry.SubresourceInfo("scale", "Scale", "autoscaling", "v1", _SUB_VERBS)
        return registry.ResourceInfo(
            group=self.group, version=version.name, resource=self.plural, kind=self.kind,
            singular=self.singular, namespaced=self.namespaced, verbs=_VERBS,
            short_names=self.short_names, categories=self.categories,
            subresources=types.MappingProxyType(subresources),
            field_selectors=("metadata.name", "metadata.namespace", *version.selectable),
            printer_columns=tuple(types.MappingProxyType(dict(c)) for c in version.columns),
            schema=row_schema(version.schema),
            builtin=False,
            deprecation_warning=version.deprecation_warning,
        )


def from_crd(crd: Mapping[str, Any]) -> Definition:
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    meta = crd.get("metadata") or {}
    kind = names.get("kind", "")
    versions = tuple(_version(v, spec.get("group", ""), kind) for v in spec.get("versions") or ())
    return Definition(
        name=meta.get("name", ""),
        uid=meta.get("uid", ""),
        group=spec.get("group", ""),
        plural=names.get("plural", ""),
        singular=names.get("singular") or kind.lower(),
        kind=kind,
        list_kind=names.get("listKind") or kind + "List",
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        namespaced=spec.get("scope") == "Namespaced",
        versions=versions,
        terminating=bool(meta.get("deletionTimestamp")),
    )


def _version(v: Mapping[str, Any], group: str, kind: str) -> Version:
    subresources = v.get("subresources") or {}
    schema = (v.get("schema") or {}).get("openAPIV3Schema") or {}
    return Version(
        name=v.get("name", ""),
        served=bool(v.get("served")),
        storage=bool(v.get("storage")),
        schema=schema,
        status="status" in subresources,
        scale=subresources.get("scale"),
        columns=tuple(v.get("additionalPrinterColumns") or ()),
        selectable=tuple(s.get("jsonPath", "").lstrip(".") for s in v.get("selectableFields") or ()),
        deprecation_warning=deprecation_text(group, v, kind),
        has_defaults=defaulting.has_defaults(schema),
    )


def deprecation_text(group: str, version: Mapping[str, Any], kind: str) -> str | None:
    """Upstream's default warning for a deprecated CRD version without its own text."""
    if not version.get("deprecated"):
        return None
    return version.get("deprecationWarning") or f"{group}/{version.get('name')} {kind} is deprecated"


def row_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The CRD schema as the generic write path uses it: closed where pruning must drop fields.

    `field_validation.prune` keeps everything under a node with no `properties`; a structural
    schema instead drops every field an object node does not declare (unless it preserves
    unknown fields). So object nodes without properties get an explicit empty `properties`, the
    root (and every embedded resource) declares apiVersion, kind and metadata, and metadata is
    the ObjectMeta definition, whose unknown fields are dropped as upstream's decoder does. A node
    with `additionalProperties: true` beside its properties keeps keys it does not name (whose
    object values upstream would further empty; here they are kept whole).
    """
    root: dict[str, Any] = copy.deepcopy(dict(schema)) if schema else {"type": "object"}
    _close(root)
    props: dict[str, Any] = root.setdefault("properties", {})
    props["apiVersion"] = {"type": "string"}
    props["kind"] = {"type": "string"}
    props["metadata"] = dict(OBJECT_META_REF)
    return root


def _close(node: dict[str, Any]) -> None:
    for child in (node.get("properties") or {}).values():
        if isinstance(child, dict):
            _close(child)
    for key in ("items", "additionalProperties"):
        child = node.get(key)
        if isinstance(child, dict):
            _close(child)
    if node.get("x-kubernetes-embedded-resource"):
        props = node.setdefault("properties", {}) if not node.get("x-kubernetes-preserve-unknown-fields") else None
        if props is not None:
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
            props.setdefault("metadata", dict(OBJECT_META_REF))
        return
    if node.get("properties") and node.get("additionalProperties") is True:
        # Upstream's pruning keeps a key such a node does not name (it falls to additionalProperties);
        # the generic pruner keeps unnamed keys only where unknown fields are preserved.
        node["x-kubernetes-preserve-unknown-fields"] = True
    open_node = node.get("x-kubernetes-preserve-unknown-fields") or "additionalProperties" in node
    if node.get("type") == "object" and "properties" not in node and not open_node:
        node["properties"] = {}
