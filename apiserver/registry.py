"""The resource registry: one row (`ResourceInfo`) per served group/version/resource.

Owns which resources this server serves and everything a request needs to know about one: kind,
scope, verbs, short names, categories, subresources, field selectors, printer columns, schema and
storage key prefix. Built-in rows come from `data/resources-1.36.json` filtered by the feature
gates (`features.py`); CRDs will `add`/`remove` rows at run time. Routing and handlers look rows up
here; `discovery.py` and `openapi.py` render them, caching on `Registry.generation`.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import re
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apiserver import features, schemas

DATA_FILE = os.path.join(os.path.dirname(__file__), "data", "resources-1.36.json")
KUBERNETES_MINOR = 36

_EMPTY: Mapping[str, Any] = types.MappingProxyType({})


@dataclass(frozen=True)
class SubresourceInfo:
    name: str
    kind: str
    group: str
    version: str
    verbs: tuple[str, ...]
    # exec/attach/portforward/proxy: not a REST object, the verbs stand for the HTTP methods.
    connect: bool = False


@dataclass(frozen=True, eq=False)
class ResourceInfo:
    group: str
    version: str
    resource: str
    kind: str
    singular: str
    namespaced: bool
    verbs: tuple[str, ...]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: Mapping[str, SubresourceInfo] = field(default_factory=lambda: _EMPTY)
    field_selectors: tuple[str, ...] = ("metadata.name", "metadata.namespace")
    field_selector_aliases: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    printer_columns: tuple[Mapping[str, Any], ...] | None = None
    schema: Mapping[str, Any] | None = None
    # False for kinds the generic store never holds: create-only reviews and bindings, and
    # componentstatuses (computed on read). Upstream marks exactly these by serving no watch.
    stored: bool = True
    # Built-in kinds accept strategic merge patch and take their schema from `schemas.py`.
    builtin: bool = True
    feature_gate: str | None = None
    stage: str = features.GA
    # The Warning header text upstream sends on every request once the version is deprecated.
    deprecation_warning: str | None = None
    # (group, version, resource) of another row whose objects these are (kube's cohabiting
    # resources): same storage keys and storage version, converted on every read and write.
    stored_as: tuple[str, str, str] | None = None
    list_kind: str = field(init=False)
    api_version: str = field(init=False)
    key_prefix: str = field(init=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: derived fields are filled once here
        set_(self, "list_kind", self.kind + "List")
        set_(self, "api_version", f"{self.group}/{self.version}" if self.group else self.version)
        group, _, resource = self.stored_as or (self.group, self.version, self.resource)
        set_(self, "key_prefix", f"/registry/{group or 'core'}/{resource}/")

    def key(self, namespace: str | None, name: str) -> str:
        """The storage key of one object: `<prefix><namespace>/<name>`, or `<prefix><name>`."""
        if self.namespaced:
            if not namespace:
                raise ValueError(f"{self.resource} is namespaced: a key needs a namespace")
            return f"{self.key_prefix}{namespace}/{name}"
        return self.key_prefix + name

    def list_prefix(self, namespace: str | None = None) -> str:
        """The key prefix a LIST scans: one namespace, or all of them (and cluster scope)."""
        if self.namespaced and namespace:
            return f"{self.key_prefix}{namespace}/"
        return self.key_prefix

    @property
    def storage_version_hash(self) -> str | None:
        # Upstream: base64 of the first 8 bytes of sha256("group/version/kind") of the storage
        # version; one served version per resource means the storage version is this one (or the
        # cohabiting row's, for rows stored as another).
        if not self.stored:
            return None
        group, version, _ = self.stored_as or (self.group, self.version, self.resource)
        digest = hashlib.sha256(f"{group}/{version}/{self.kind}".encode()).digest()
        return base64.b64encode(digest[:8]).decode()


@dataclass(frozen=True)
class Decision:
    """What `builtin` did with one entry of resources-1.36.json, and why."""

    group: str
    version: str
    resource: str
    outcome: str  # "served", "gated" (its feature gate is off) or "excluded"
    reason: str


# Built-in resources kept in another resource's storage, as kube-apiserver's storage factory
# cohabits them: events.k8s.io Events are core/v1 Events (`kinds/event_shapes.py` converts).
COHABITING: Mapping[tuple[str, str], tuple[str, str, str]] = types.MappingProxyType({
    ("events.k8s.io", "events"): ("", "v1", "events"),
})

_VERSION_RE = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key giving Kubernetes version priority: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > other."""
    m = _VERSION_RE.match(version)
    if not m:
        return (3, 0, 0, version)  # not kube-like: last, alphabetical
    major, stage, minor = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor, "")


class Registry:
    """Every served resource, in discovery order; mutable only through `add` and `remove`."""

    def __init__(self, group_order: Iterable[str] = ()) -> None:
        self._group_rank = {g: i for i, g in enumerate(group_order)}
        self._rows: dict[tuple[str, str, str], ResourceInfo] = {}
        self._by_kind: dict[tuple[str, str, str], ResourceInfo] = {}
        self.generation = 0
        self.decisions: tuple[Decision, ...] = ()
        # Aggregated groups with an APIService priority below the CRDs' 1000 (metrics-server's 100).
        self.low_priority_groups: set[str] = set()

    @classmethod
    def builtin(cls, gates: features.FeatureGates | None = None) -> Registry:
        gates = gates or features.FeatureGates()
        data = _resource_table()
        reg = cls(g["group"] for g in data["groups"])
        decisions = []
        for info, decision in _builtin_rows(data, gates):
            decisions.append(decision)
            if info is not None:
                reg.add(info)
        reg.decisions = tuple(decisions)
        return reg

    # -- lookups --------------------------------------------------------------------------
    def get(self, group: str, version: str, resource: str) -> ResourceInfo | None:
        return self._rows.get((group, version, resource))

    def by_kind(self, group: str, version: str, kind: str) -> ResourceInfo | None:
        return self._by_kind.get((group, version, kind))

    def groups(self) -> list[str]:
        """Served groups in discovery order; the core group ("") first."""
        served = {g for g, _, _ in self._rows}
        return sorted(served, key=self._group_key)

    def served_versions(self, group: str) -> list[str]:
        """Versions of one group, preferred first."""
        return sorted({v for g, v, _ in self._rows if g == group}, key=version_priority)

    def resources(self, group: str, version: str) -> list[ResourceInfo]:
        """One group-version's resources, alphabetical as discovery lists them."""
        return sorted((r for (g, v, _), r in self._rows.items() if g == group and v == version),
                      key=lambda r: r.resource)

    def all(self) -> list[ResourceInfo]:
        return [r for g in self.groups() for v in self.served_versions(g) for r in self.resources(g, v)]

    # -- changes (CRDs) -------------------------------------------------------------------
    def add(self, info: ResourceInfo) -> None:
        """Serve `info`, replacing a row with the same group/version/resource."""
        old = self._rows.get((info.group, info.version, info.resource))
        if old is not None:
            self._by_kind.pop((old.group, old.version, old.kind), None)
        self._rows[(info.group, info.version, info.resource)] = info
        self._by_kind[(info.group, info.version, info.kind)] = info
        self.generation += 1

    def remove(self, group: str, version: str, resource: str) -> ResourceInfo | None:
        info = self._rows.pop((group, version, resource), None)
        if info is not None:
            self._by_kind.pop((group, version, info.kind), None)
            self.generation += 1
        return info

    def _group_key(self, group: str) -> tuple[int, str]:
        # Built-in groups keep upstream's APIService priority order; others (CRD groups) follow,
        # alphabetically, as upstream's default priority for them does.
        rank = self._group_rank.get(group, len(self._group_rank) + (group in self.low_priority_groups))
        return (rank, group)


@functools.cache
def _resource_table() -> dict[str, Any]:
    with open(DATA_FILE, "rb") as f:
        return json.load(f)


def _builtin_rows(data: Mapping[str, Any], gates: features.FeatureGates
                  ) -> Iterable[tuple[ResourceInfo | None, Decision]]:
    """Decide every entry of the 1.36 resource table: serve it, gate it off, or exclude it.

    The rule (issue #3): serve each built-in resource in its 1.36 preferred version only, because
    haru converts nothing and must "not serve a version it cannot convert". The preferred version
    of a resource is the highest-priority version of its group that has it, so the rule yields
    exactly the issue's list without exceptions:
      * autoscaling: HorizontalPodAutoscaler in v2 only (v1 excluded; autoscaling/v1 Scale is still
        the kind of every `scale` subresource, which needs no served group-version);
      * scheduling.k8s.io: v1 PriorityClass and v1alpha2 Workload/PodGroup (different resources);
      * resource.k8s.io: v1 for the four core kinds, v1beta2 for DeviceTaintRule (its highest
        version in 1.36; the deprecated v1alpha3 copy is excluded), v1alpha3 for
        ResourcePoolStatusRequest (its only version);
      * certificates v1beta1, coordination v1beta1 LeaseCandidate, storagemigration v1beta1 and
        internal.apiserver v1alpha1 are their resources' only or highest versions.
    Alpha and beta entries are served because their gates default on here (principle 6).
    """
    versions_of = {g["group"]: g["versions"] for g in data["groups"]}
    preferred: dict[tuple[str, str], str] = {}
    for entry in data["resources"]:
        key = (entry["group"], entry["resource"])
        order = versions_of[entry["group"]]
        if key not in preferred or order.index(entry["version"]) < order.index(preferred[key]):
            preferred[key] = entry["version"]

    for entry in data["resources"]:
        group, version, resource = entry["group"], entry["version"], entry["resource"]

        def decide(outcome: str, reason: str) -> Decision:
            return Decision(group, version, resource, outcome, reason)

        best = preferred[(group, resource)]
        if version != best:
            yield None, decide("excluded", f"{best} is the preferred version; haru serves one version "
                                           "per resource because it converts none")
            continue
        schema = schemas.for_kind(group, version, entry["kind"])
        if schema is None:
            yield None, decide("excluded", "kubernetes-validate has no 1.36 schema for this kind")
            continue
        gate = entry.get("featureGate")
        if gate and not gates.enabled(gate):
            yield None, decide("gated", f"feature gate {gate} is off")
            continue
        reason = "preferred 1.36 version" + (f", feature gate {gate} on" if gate else "")
        yield _row(entry, schema, gates), decide("served", reason)


def _row(entry: Mapping[str, Any], schema: Mapping[str, Any], gates: features.FeatureGates) -> ResourceInfo:
    subresources = {
        s["name"]: SubresourceInfo(s["name"], s["kind"], s["group"], s["version"], tuple(s["verbs"]),
                                   bool(s.get("connect")))
        for s in entry["subresources"]
        if not s.get("featureGate") or gates.enabled(s["featureGate"])
    }
    columns = entry.get("printerColumns")
    return ResourceInfo(
        group=entry["group"],
        version=entry["version"],
        resource=entry["resource"],
        kind=entry["kind"],
        singular=entry["singular"],
        namespaced=entry["namespaced"],
        verbs=tuple(entry["verbs"]),
        short_names=tuple(entry["shortNames"]),
        categories=tuple(entry["categories"]),
        subresources=types.MappingProxyType(subresources),
        field_selectors=tuple(entry["fieldSelectors"]),
        field_selector_aliases=types.MappingProxyType(dict(entry.get("fieldSelectorAliases") or {})),
        printer_columns=tuple(types.MappingProxyType(c) for c in columns) if columns is not None else None,
        schema=schema,
        stored="watch" in entry["verbs"],
        feature_gate=entry.get("featureGate"),
        stage=entry["stage"],
        deprecation_warning=_deprecation_warning(entry),
        stored_as=COHABITING.get((entry["group"], entry["resource"])),
    )


def _deprecation_warning(entry: Mapping[str, Any]) -> str | None:
    deprecated = entry.get("deprecatedIn")
    if not deprecated or int(deprecated.split(".")[1]) > KUBERNETES_MINOR:
        return None
    gv = f"{entry['group']}/{entry['version']}" if entry["group"] else entry["version"]
    text = f"{gv} {entry['kind']} is deprecated in v{deprecated}+"
    if entry.get("removedIn"):
        text += f", unavailable in v{entry['removedIn']}+"
    if entry.get("replacement"):
        repl_gv, _, repl_kind = entry["replacement"].rpartition("/")
        text += f"; use {repl_gv} {repl_kind}"
    return text
