"""OpenAPI v3: the `/openapi/v3` root and one document per served group-version.

Owns turning registry rows plus the 1.36 JSON schemas (`schemas.py`) into the documents kubectl
reads: `components.schemas` with every definition reachable from the group-version's kinds (refs
rewritten to `#/components/schemas/`), and paths with one operation per verb, each carrying
`x-kubernetes-action` and `x-kubernetes-group-version-kind`. Every PATCH declares `fieldValidation`
(kubectl's `--validate=strict` requires it) and accepts strategic merge patch for built-ins
(kubectl's client-side apply computes the patch from this schema). Documents are built lazily,
one group-version at a time, and cached by a hash of their inputs, which is also the `?hash=` in
the root and a usable ETag. The lead's handlers serve `root()` and `document()`.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from apiserver import delete_answers, registry, schemas, version

_DEF_PREFIX = "#/$defs/"
_COMPONENT_PREFIX = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
DELETE_OPTIONS, STATUS, WATCH_EVENT, PATCH = (_META + n for n in ("DeleteOptions", "Status", "WatchEvent", "Patch"))
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_MAX_CACHED_DOCUMENTS = 64

JSON = "application/json"
_WATCH_TYPES = (JSON, "application/json;stream=watch")
_PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json")
_REQUEST_TYPES = (JSON, "application/yaml", "application/vnd.kubernetes.protobuf")

# Built documents by content hash; roots per registry, rebuilt when its generation moves.
_documents: collections.OrderedDict[str, bytes] = collections.OrderedDict()
_hash_cache: weakref.WeakKeyDictionary[registry.Registry, tuple[int, dict[tuple[str, str], str]]] = (
    weakref.WeakKeyDictionary()
)


# -- public API ---------------------------------------------------------------------------
def path_of(group: str, version: str) -> str:
    """The root's key for a group-version: `api/v1` or `apis/<group>/<version>`."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def root(reg: registry.Registry) -> dict[str, Any]:
    """The `/openapi/v3` body: every served group-version and the URL of its document."""
    return {
        "paths": {
            path_of(g, v): {"serverRelativeURL": f"/openapi/v3/{path_of(g, v)}?hash={h}"}
            for (g, v), h in _hashes(reg).items()
        }
    }


def group_version_hash(reg: registry.Registry, group: str, version: str) -> str | None:
    return _hashes(reg).get((group, version))


def group_version(reg: registry.Registry, group: str, version: str) -> bytes | None:
    """The OpenAPI v3 document of one served group-version, or None when it is not served."""
    digest = group_version_hash(reg, group, version)
    if digest is None:
        return None
    body = _documents.get(digest)
    if body is None:
        body = msgspec.json.encode(_build(reg.resources(group, version), group, version))
        _documents[digest] = body
        if len(_documents) > _MAX_CACHED_DOCUMENTS:
            _documents.popitem(last=False)
    else:
        _documents.move_to_end(digest)
    return body


def spec(reg: registry.Registry, group: str, version: str) -> dict[str, Any]:
    """One group-version's document as a dict, built afresh (`openapi_v2.py` converts these).

    Its components are shared with the cache: read them, never mutate them.
    """
    return _build(reg.resources(group, version), group, version)


def kind_component_name(info: registry.ResourceInfo) -> str:
    """The components.schemas name of a row's kind, e.g. `io.k8s.api.core.v1.Pod`."""
    return _kind_component_name(info)


def document(reg: registry.Registry, path: str) -> tuple[bytes, str] | None:
    """For `/openapi/v3/<path>`: the document and its hash (quote it for an ETag), or None."""
    parts = path.strip("/").split("/")
    if len(parts) == 2 and parts[0] == "api":
        group, ver = "", parts[1]
    elif len(parts) == 3 and parts[0] == "apis":
        group, ver = parts[1], parts[2]
    else:
        return None
    body = group_version(reg, group, ver)
    digest = group_version_hash(reg, group, ver)
    return (body, digest) if body is not None and digest is not None else None


# -- hashing: a document's identity is its inputs ------------------------------------------
def _hashes(reg: registry.Registry) -> dict[tuple[str, str], str]:
    cached = _hash_cache.get(reg)
    if cached is not None and cached[0] == reg.generation:
        return cached[1]
    hashes = {(g, v): _fingerprint(reg.resources(g, v)) for g in reg.groups() for v in reg.served_versions(g)}
    _hash_cache[reg] = (reg.generation, hashes)
    return hashes


@functools.cache
def _builder_identity() -> bytes:
    # The documents also depend on this code, the schema set and the DELETE answers table: a
    # changed builder must not keep serving old `?hash=` URLs that clients cache as immutable.
    with open(__file__, "rb") as f:
        source = f.read()
    with open(delete_answers.TABLE_PATH, "rb") as f:
        source += f.read()
    return hashlib.sha256(source + schemas.SCHEMA_VERSION.encode() + version.KUBERNETES_VERSION.encode()).digest()


def _fingerprint(infos: Iterable[registry.ResourceInfo]) -> str:
    digest = hashlib.sha512(_builder_identity())
    for info in infos:
        digest.update(msgspec.json.encode([
            info.group, info.version, info.resource, info.kind, info.namespaced, info.verbs, info.builtin,
            [[s.name, s.kind, s.group, s.version, s.verbs, s.connect] for s in info.subresources.values()],
            # A built-in schema is fixed by its definition name; any other is hashed as it is.
            _kind_component_name(info) if info.builtin else _plain(info.schema),
        ]))
    return digest.hexdigest().upper()


def _plain(node: Any) -> Any:
    if isinstance(node, Mapping):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_plain(v) for v in node]
    return node


# -- schemas: kubernetes-validate JSON Schema → OpenAPI v3 components ----------------------
@functools.cache
def component(name: str) -> dict[str, Any]:
    """One definition in OpenAPI v3 form; shared between documents, never mutate it."""
    source = schemas.definitions()[name]
    if name == _INT_OR_STRING:
        # The JSON Schema says oneOf string|integer with nulls; the real server's v3 form
        # (kubectl explain prints it as <IntOrString>):
        return {"description": source.get("description", ""), "format": "int-or-string",
                "oneOf": [{"type": "integer"}, {"type": "string"}]}
    if name == _QUANTITY:
        return {"description": source.get("description", ""), "oneOf": [{"type": "string"}, {"type": "number"}]}
    return _convert(source)


def _convert(node: Any) -> Any:
    """Rewrite one JSON Schema node: refs to components, `[T, "null"]` types to `T`, no null enums."""
    if isinstance(node, list):
        return [_convert(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith("x-") or key in ("default", "example", "required"):
            out[key] = value  # data, not schemas
        elif key == "$ref" and isinstance(value, str):
            out[key] = _COMPONENT_PREFIX + value[len(_DEF_PREFIX):] if value.startswith(_DEF_PREFIX) else value
        elif key == "type" and isinstance(value, list):
            concrete = [t for t in value if t != "null"]
            if concrete:
                out[key] = concrete[0] if len(concrete) == 1 else concrete
        elif key == "enum" and isinstance(value, list):
            values = [v for v in value if v is not None]
            if values:
                out[key] = values
        elif key == "properties" and isinstance(value, dict):
            # Keys here are field names (JSONSchemaProps even has fields named `$ref` and `oneOf`).
            out[key] = {field: _convert_property(field, schema) for field, schema in value.items()}
        else:
            out[key] = _convert(value)
    return out


def _convert_property(field: str, schema: Any) -> Any:
    converted = _convert(schema)
    if field in ("apiVersion", "kind") and isinstance(converted, dict):
        # The single-value enum pins the version of the JSON Schema file; the server's own
        # document describes these fields as plain strings.
        converted.pop("enum", None)
    return converted


def _schema_refs(node: Any, found: set[str]) -> None:
    """Collect the definition names a raw (`#/$defs/`) schema node refers to."""
    if isinstance(node, list):
        for item in node:
            _schema_refs(item, found)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(_DEF_PREFIX):
                found.add(value[len(_DEF_PREFIX):])
            elif key == "properties" and isinstance(value, dict):
                for schema in value.values():
                    _schema_refs(schema, found)
            elif not key.startswith("x-") and key not in ("default", "example", "required", "enum"):
                _schema_refs(value, found)


@functools.cache
def _direct_refs(name: str) -> frozenset[str]:
    if name in (_INT_OR_STRING, _QUANTITY):
        return frozenset()
    found: set[str] = set()
    _schema_refs(schemas.definitions()[name], found)
    return frozenset(found)


def reachable(roots: Iterable[str]) -> set[str]:
    """Every definition name reachable from `roots`, roots included."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(_direct_refs(name) - seen)
    return seen


def _kind_component_name(info: registry.ResourceInfo) -> str:
    if info.builtin:
        name = schemas.name_for_kind(info.group, info.version, info.kind)
        if name is not None:
            return name
    # Custom kinds: the reversed-group naming upstream uses for CRDs (com.example.v1.Widget).
    reversed_group = ".".join(reversed(info.group.split("."))) if info.group else "core"
    return f"{reversed_group}.{info.version}.{info.kind}"


def _custom_components(info: registry.ResourceInfo) -> dict[str, Any]:
    """Components for a kind whose schema is not one of the built-in definitions."""
    gvk = {"group": info.group, "version": info.version, "kind": info.kind}
    name = _kind_component_name(info)
    kind_schema = _convert(_plain(info.schema or {"type": "object"}))
    kind_schema["x-kubernetes-group-version-kind"] = [gvk]
    list_schema = {
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"$ref": _COMPONENT_PREFIX + _META + "ListMeta"},
            "items": {"type": "array", "items": {"$ref": _COMPONENT_PREFIX + name}},
        },
        "x-kubernetes-group-version-kind": [{**gvk, "kind": info.list_kind}],
    }
    return {name: kind_schema, name + "List": list_schema}


# -- paths ---------------------------------------------------------------------------------
_QUERY_PARAMETERS: dict[str, tuple[str, str]] = {
    "pretty": ("string", "If 'true', the output is pretty printed."),
    "dryRun": ("string", "When present (the only valid value is All), the request is validated and defaulted "
                         "but not persisted."),
    "fieldManager": ("string", "The name of the actor making these changes, recorded in managedFields. "
                               "Required for apply patches."),
    "fieldValidation": ("string", "How the server treats unknown or duplicate fields in the request object: "
                                  "Ignore, Warn (answer with Warning headers) or Strict (reject the request)."),
    "force": ("boolean", "Take over fields owned by other managers on an apply patch. Must be unset for other "
                         "patch types."),
    "gracePeriodSeconds": ("integer", "Seconds before the object is deleted; zero deletes at once."),
    "orphanDependents": ("boolean", "Deprecated: use propagationPolicy."),
    "propagationPolicy": ("string", "Garbage collection of dependents: Orphan, Background or Foreground."),
    "labelSelector": ("string", "Only objects whose labels match this selector."),
    "fieldSelector": ("string", "Only objects whose fields match this selector."),
    "limit": ("integer", "Return at most this many objects, with a continue token for the rest."),
    "continue": ("string", "The continue token of a previous limited list."),
    "resourceVersion": ("string", "The resource version the list or watch is served from."),
    "resourceVersionMatch": ("string", "How resourceVersion applies to a list: Exact or NotOlderThan."),
    "sendInitialEvents": ("boolean", "Start a watch with the current objects as ADDED events, then a bookmark "
                                     "annotated k8s.io/initial-events-end."),
    "timeoutSeconds": ("integer", "End the list or watch after this many seconds."),
    "watch": ("boolean", "Stream changes to the listed objects instead of listing them."),
    "allowWatchBookmarks": ("boolean", "Ask for BOOKMARK events on a watch."),
    # subresources
    "container": ("string", "The container to act on; defaults to the only or the default container."),
    "command": ("string", "The command to run, one argument per parameter."),
    "stdin": ("boolean", "Attach the standard input."),
    "stdout": ("boolean", "Attach the standard output."),
    "stderr": ("boolean", "Attach the standard error."),
    "tty": ("boolean", "Allocate a terminal."),
    "follow": ("boolean", "Stream the log as it grows."),
    "previous": ("boolean", "The log of the previous, terminated container."),
    "sinceSeconds": ("integer", "Only log lines newer than this many seconds."),
    "tailLines": ("integer", "Only this many lines from the end of the log."),
    "timestamps": ("boolean", "Prefix every log line with its timestamp."),
    "limitBytes": ("integer", "Stop after this many bytes of log."),
    "ports": ("integer", "The pod ports to forward."),
    "path": ("string", "The path to proxy to."),
}
_LIST_QUERY = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
               "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch")
_ACTION_QUERY: dict[str, tuple[str, ...]] = {
    "get": (),
    "list": _LIST_QUERY,
    "post": ("dryRun", "fieldManager", "fieldValidation"),
    "put": ("dryRun", "fieldManager", "fieldValidation"),
    "patch": ("dryRun", "fieldManager", "fieldValidation", "force"),
    "delete": ("dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy"),
    "deletecollection": ("continue", "dryRun", "fieldSelector", "gracePeriodSeconds", "labelSelector", "limit",
                         "orphanDependents", "propagationPolicy", "resourceVersion", "resourceVersionMatch",
                         "sendInitialEvents", "timeoutSeconds"),
}
_SUBRESOURCE_QUERY: dict[str, tuple[str, ...]] = {
    "log": ("container", "follow", "limitBytes", "previous", "sinceSeconds", "tailLines", "timestamps"),
    "exec": ("command", "container", "stderr", "stdin", "stdout", "tty"),
    "attach": ("container", "stderr", "stdin", "stdout", "tty"),
    "portforward": ("ports",),
    "proxy": ("path",),
}
# A connect subresource's discovery verbs stand for these HTTP methods.
_CONNECT_METHODS = {"get": "get", "create": "post", "update": "put", "patch": "patch", "delete": "delete"}
# A subresource's discovery verbs as REST actions.
_REST_ACTION = {"get": "get", "update": "put", "patch": "patch", "create": "post", "delete": "delete"}


def _query(names: Iterable[str]) -> list[dict[str, Any]]:
    return [{"name": n, "in": "query", "description": _QUERY_PARAMETERS[n][1],
             "schema": {"type": _QUERY_PARAMETERS[n][0], "uniqueItems": True}} for n in names]


def _path_parameters(kind: str, *, namespaced: bool, named: bool, extra: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    params = []
    if named:
        params.append({"name": "name", "in": "path", "required": True, "description": f"name of the {kind}",
                       "schema": {"type": "string", "uniqueItems": True}})
    if namespaced:
        params.append({"name": "namespace", "in": "path", "required": True,
                       "description": "object name and auth scope, such as for teams and projects",
                       "schema": {"type": "string", "uniqueItems": True}})
    for name in extra:
        params.append({"name": name, "in": "path", "required": True, "description": _QUERY_PARAMETERS[name][1],
                       "schema": {"type": "string", "uniqueItems": True}})
    return params + _query(("pretty",))


def _ref(name: str | None) -> dict[str, Any]:
    return {"$ref": _COMPONENT_PREFIX + name} if name else {"type": "string"}


def _content(schema: dict[str, Any], media_types: Iterable[str] = (JSON,)) -> dict[str, Any]:
    return {media: {"schema": schema} for media in media_types}


def _responses(schema: dict[str, Any], codes: Iterable[str] = ("200",), media_types: Iterable[str] = (JSON,)
               ) -> dict[str, Any]:
    words = {"200": "OK", "201": "Created", "202": "Accepted"}
    return {code: {"description": words[code], "content": _content(schema, media_types)} for code in codes}


class _DocumentBuilder:
    """Collects the paths and the component roots of one group-version document."""

    def __init__(self, group: str, version: str) -> None:
        self.prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
        # Upstream's operation ids and tags: readAppsV1NamespacedDeployment, tag apps_v1.
        group_word, group_tag = group_words(group)
        self.gv_word = group_word + _title(version)
        self.tag = group_tag + "_" + version
        self.paths: dict[str, dict[str, Any]] = {}
        self.roots: set[str] = set()
        self.custom: dict[str, Any] = {}

    def add_path(self, path: str, kind: str, *, namespaced: bool, named: bool, extra: tuple[str, ...] = (),
                 query: tuple[str, ...] = ()) -> None:
        self.paths.setdefault(path, {"parameters": _path_parameters(kind, namespaced=namespaced, named=named,
                                                                    extra=extra) + _query(query)})

    def operation(self, path: str, method: str, action: str, gvk: dict[str, str], operation_id: str,
                  description: str, query: Iterable[str], responses: dict[str, Any],
                  request: dict[str, Any] | None = None) -> None:
        op: dict[str, Any] = {"description": description, "operationId": operation_id, "tags": [self.tag]}
        params = _query(query)
        if params:
            op["parameters"] = params
        if request is not None:
            op["requestBody"] = {"content": request}
        op["responses"] = responses
        op["x-kubernetes-action"] = action
        op["x-kubernetes-group-version-kind"] = gvk
        self.paths[path][method] = op

    def rest(self, path: str, action: str, gvk: dict[str, str], operation_id: str, what: str,
             schema: dict[str, Any], *, strategic: bool = True, query: tuple[str, ...] = (),
             returns_object: bool = False) -> None:
        """One REST operation: its method, query, request body and responses follow from the action.

        `returns_object`: a delete answers `schema` (the kind) rather than Status."""
        if action in ("get", "list"):
            media = _WATCH_TYPES if action == "list" else (JSON,)
            self.operation(path, "get", action, gvk, operation_id, what, query or _ACTION_QUERY[action],
                           _responses(schema, media_types=media))
        elif action in ("post", "put"):
            codes = ("200", "201", "202") if action == "post" else ("200", "201")
            self.operation(path, action, action, gvk, operation_id, what, _ACTION_QUERY[action],
                           _responses(schema, codes), _content(schema, _REQUEST_TYPES))
        elif action == "patch":
            self.roots.add(PATCH)
            media = _PATCH_TYPES if strategic else tuple(t for t in _PATCH_TYPES if "strategic" not in t)
            self.operation(path, "patch", "patch", gvk, operation_id, what, _ACTION_QUERY["patch"],
                           _responses(schema, ("200", "201")), _content(_ref(PATCH), media))
        else:  # delete, deletecollection: a DeleteOptions body; the object or a Status back
            # Upstream declares the kind where the store returns the deleted object (the
            # installer's deleteReturnsDeletedObject), Status elsewhere and on every collection.
            answer = schema if returns_object and action == "delete" else _ref(STATUS)
            self.roots.add(DELETE_OPTIONS)
            if answer is not schema:
                self.roots.add(STATUS)
            codes = ("200", "202") if action == "delete" else ("200",)
            self.operation(path, "delete", action, gvk, operation_id, what, _ACTION_QUERY[action],
                           _responses(answer, codes), _content(_ref(DELETE_OPTIONS)))

    def add_resource(self, info: registry.ResourceInfo) -> None:
        kind_name = _kind_component_name(info)
        if info.builtin:
            self.roots.add(kind_name)
        else:
            self.custom.update(_custom_components(info))
        gvk = {"group": info.group, "version": info.version, "kind": info.kind}
        kind, ns, verbs = info.kind, info.namespaced, set(info.verbs)
        op_kind = f"{self.gv_word}{'Namespaced' if ns else ''}{kind}"
        ns_segment = "/namespaces/{namespace}" if ns else ""
        collection = f"{self.prefix}{ns_segment}/{info.resource}"
        item = collection + "/{name}"
        kind_ref = _ref(kind_name)

        if verbs & {"list", "create", "deletecollection"}:
            self.add_path(collection, kind, namespaced=ns, named=False)
        if "list" in verbs:
            list_ref = _ref(self._list_component(info))
            self.rest(collection, "list", gvk, f"list{op_kind}", f"list or watch objects of kind {kind}", list_ref)
            if ns:
                everywhere = f"{self.prefix}/{info.resource}"
                self.add_path(everywhere, kind, namespaced=False, named=False)
                self.rest(everywhere, "list", gvk, f"list{self.gv_word}{kind}ForAllNamespaces",
                          f"list or watch objects of kind {kind}", list_ref)
        if "create" in verbs:
            self.rest(collection, "post", gvk, f"create{op_kind}", f"create a {kind}", kind_ref)
        if "deletecollection" in verbs:
            self.rest(collection, "deletecollection", gvk, f"deleteCollection{op_kind}",
                      f"delete collection of {kind}", kind_ref)

        if verbs & {"get", "update", "patch", "delete"}:
            self.add_path(item, kind, namespaced=ns, named=True)
        for verb, action, word, what in (("get", "get", "read", "read the specified"),
                                         ("update", "put", "replace", "replace the specified"),
                                         ("patch", "patch", "patch", "partially update the specified"),
                                         ("delete", "delete", "delete", "delete a")):
            if verb in verbs:
                self.rest(item, action, gvk, f"{word}{op_kind}", f"{what} {kind}", kind_ref, strategic=info.builtin,
                          returns_object=verb == "delete" and delete_answers.declares_object(info))

        if "watch" in verbs:
            self._watch_paths(info, gvk, op_kind, ns_segment)
        for sub in sorted(info.subresources.values(), key=lambda s: s.name):
            self._subresource(info, sub, item, op_kind)

    def _list_component(self, info: registry.ResourceInfo) -> str | None:
        if not info.builtin:
            return _kind_component_name(info) + "List"
        name = schemas.name_for_kind(info.group, info.version, info.list_kind)
        if name is not None:
            self.roots.add(name)
        return name

    def _watch_paths(self, info: registry.ResourceInfo, gvk: dict[str, str], op_kind: str, ns_segment: str) -> None:
        # The deprecated /watch/ paths: still served upstream, and still in its documents.
        self.roots.add(WATCH_EVENT)
        event = _responses(_ref(WATCH_EVENT), media_types=_WATCH_TYPES)
        kind, ns = info.kind, info.namespaced
        watch_collection = f"{self.prefix}/watch{ns_segment}/{info.resource}"
        self.add_path(watch_collection, kind, namespaced=ns, named=False, query=_LIST_QUERY)
        self.operation(watch_collection, "get", "watchlist", gvk, f"watch{op_kind}List",
                       f"watch changes to a list of {kind}", (), event)
        watch_item = watch_collection + "/{name}"
        self.add_path(watch_item, kind, namespaced=ns, named=True, query=_LIST_QUERY)
        self.operation(watch_item, "get", "watch", gvk, f"watch{op_kind}",
                       f"watch changes to an object of kind {kind}", (), event)
        if ns:
            everywhere = f"{self.prefix}/watch/{info.resource}"
            self.add_path(everywhere, kind, namespaced=False, named=False, query=_LIST_QUERY)
            self.operation(everywhere, "get", "watchlist", gvk, f"watch{self.gv_word}{kind}ListForAllNamespaces",
                           f"watch changes to a list of {kind}", (), event)

    def _subresource(self, info: registry.ResourceInfo, sub: registry.SubresourceInfo, item: str,
                     op_kind: str) -> None:
        path = f"{item}/{sub.name}"
        gvk = {"group": sub.group, "version": sub.version, "kind": sub.kind}
        self.add_path(path, info.kind, namespaced=info.namespaced, named=True)
        query = _SUBRESOURCE_QUERY.get(sub.name, ())
        if sub.connect:
            self._connect(info, sub, path, gvk, op_kind, query)
            return
        if sub.name == "log":
            self.operation(path, "get", "get", gvk, f"read{op_kind}Log", f"read log of the specified {info.kind}",
                           query, _responses({"type": "string"}, media_types=("text/plain", JSON)))
            return
        if info.builtin:
            sub_name = schemas.name_for_kind(sub.group, sub.version, sub.kind)
            if sub_name is not None:
                self.roots.add(sub_name)
        elif (sub.group, sub.version, sub.kind) == (info.group, info.version, info.kind):
            sub_name = _kind_component_name(info)  # status of a custom kind
        else:  # a custom kind's scale: the built-in autoscaling/v1 Scale
            sub_name = schemas.name_for_kind(sub.group, sub.version, sub.kind)
            if sub_name is not None:
                self.roots.add(sub_name)
        sub_ref = _ref(sub_name)
        words = {"get": "read", "update": "replace", "patch": "patch", "create": "create", "delete": "delete"}
        for verb in sub.verbs:
            self.rest(path, _REST_ACTION[verb], gvk, f"{words[verb]}{op_kind}{_title(sub.name)}",
                      f"{verb} {sub.name} of the specified {info.kind}", sub_ref, strategic=info.builtin,
                      query=query)

    def _connect(self, info: registry.ResourceInfo, sub: registry.SubresourceInfo, path: str,
                 gvk: dict[str, str], op_kind: str, query: tuple[str, ...]) -> None:
        # exec, attach, portforward and proxy: the discovery verbs stand for HTTP methods, the
        # bodies are streams; proxy also serves everything below it.
        targets = [(path, "", query)]
        if sub.name == "proxy":
            with_path = path + "/{path}"
            self.add_path(with_path, info.kind, namespaced=info.namespaced, named=True, extra=("path",))
            targets.append((with_path, "WithPath", ()))
        scoped_kind = op_kind[len(self.gv_word):]
        for verb in sub.verbs:
            method = _CONNECT_METHODS[verb]
            for target, suffix, target_query in targets:
                self.operation(target, method, "connect", gvk,
                               f"connect{self.gv_word}{_title(method)}{scoped_kind}{_title(sub.name)}{suffix}",
                               f"connect {method.upper()} requests to {sub.name} of {info.kind}", target_query,
                               _responses({"type": "string"}, media_types=("*/*",)))


def group_words(group: str) -> tuple[str, str]:
    """How operation ids and tags name a group: ("RbacAuthorization", "rbacAuthorization"), ("Core", "core")."""
    words = [w for w in (group or "core").removesuffix(".k8s.io").split(".") if w]
    return "".join(_title(w) for w in words), words[0] + "".join(_title(w) for w in words[1:])


def _title(word: str) -> str:
    return word[:1].upper() + word[1:]


def _build(infos: Iterable[registry.ResourceInfo], group: str, ver: str) -> dict[str, Any]:
    builder = _DocumentBuilder(group, ver)
    for info in infos:
        builder.add_resource(info)
    if builder.custom:  # custom kinds refer to the built-in metadata types
        builder.roots.update((_META + "ListMeta", _META + "ObjectMeta"))
    components = {name: component(name) for name in sorted(reachable(builder.roots))}
    components.update(builder.custom)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v" + version.KUBERNETES_VERSION},
        "paths": builder.paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header",
                                                "description": "Bearer Token authentication"}},
        },
        "security": [{"BearerToken": []}],
    }
