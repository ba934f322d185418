"""`ClusterView`: everything admission may read of the cluster, and the helpers the server lends it.

Admission imports nothing of the API server or the store (ARCHITECTURE.md), so the server
hands the chain one object with this shape (`apiserver/admitting.py` builds it over the store
and the registry; tests use small fakes). All reads are synchronous and see committed state;
`revision` lets callers skip work when nothing was written since they last looked.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol


class ResourceRef(NamedTuple):
    """A served resource: where its objects live and whether they are namespaced."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool


class StoredObject(NamedTuple):
    """One stored object as listed: its name, namespace, revision and encoded JSON."""

    namespace: str
    name: str
    revision: int
    value: bytes


class ClusterView(Protocol):
    def revision(self) -> int:
        """The store's last committed revision."""

    def get(self, group: str, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        """The object, decoded, or None. Read it, never change it: namespaces are shared by requests."""

    def objects(self, group: str, resource: str, namespace: str | None = None) -> list[StoredObject]:
        """Every object of a resource (in one namespace, or all), undecoded."""

    def list_group(self, group: str) -> dict[str, list[StoredObject]]:
        """Every stored object of one API group's cluster-scoped resources, by resource (one read)."""

    def group_revision(self, group: str) -> int:
        """A revision that moves whenever an object of the group is written (and may move more)."""

    def resource_for_kind(self, api_version: str, kind: str) -> ResourceRef | None:
        """The resource serving this kind, or None when the kind is unknown."""

    def resource(self, group: str, version: str, resource: str) -> ResourceRef | None:
        """The resource at group/version/resource, or None."""

    def versions(self, group: str, resource: str) -> list[str]:
        """The versions a resource is served in (for matchPolicy: Equivalent)."""

    def schema(self, group: str, version: str, kind: str) -> dict[str, Any] | None:
        """The kind's OpenAPI schema (refs resolvable with `resolve`), or None."""

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        """A schema node with its `$ref` followed."""

    def apply(self, live: dict[str, Any], config: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
        """Structured merge of an apply configuration (server-side apply rules); PatchFailed on error.
        The result may share the parts the configuration leaves alone with `live`, and what it
        adds with `config`: the caller replaces the object with it and changes neither input."""

    def json_patch(self, doc: dict[str, Any], operations: list[dict[str, Any]]) -> Any:
        """RFC 6902 applied to a copy of `doc`; PatchFailed with the library's text on error."""
