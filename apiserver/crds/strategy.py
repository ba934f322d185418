"""The write rules of one custom resource, built from its CRD (upstream's customResourceStrategy).

Hook order is `apiserver/strategy.py`'s. What CRDs add: the schema of the object's own version
drives defaulting (`defaulting.py`), validation (`schema_validation.py`) and CEL rules
(`cel_rules.py`); every custom resource counts `metadata.generation` (spec changes only when the
status subresource is on, any non-metadata change otherwise); the scale subresource's replica
paths must hold non-negative int32s; a terminating CRD takes no new objects. `kinds.strategy_for`
builds one per request from the definition `served.py` holds.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors, validation
from apiserver.crds import cel_rules, defaulting, schema_validation
from apiserver.crds.definition import Definition, Version
from apiserver.strategy import WRITABLE_METADATA, Causes, Obj, StatusStrategy, Strategy

_INT32_MAX = 2**31 - 1


class CustomResourceStrategy(Strategy):
    # customresource statusStrategy: a status write copies the stored object and sets only status.
    status_resets = WRITABLE_METADATA

    def __init__(self, definition: Definition, *, namespaced: bool, has_status: bool,
                 name_rule: str = "subdomain") -> None:
        super().__init__(namespaced=namespaced, has_status=has_status, name_rule=name_rule)
        self.definition = definition

    @property
    def tracks_generation(self) -> bool:
        return True

    def _version(self, obj: Obj) -> Version | None:
        return self.definition.version_of(str(obj.get("apiVersion", "")))

    # -- create ---------------------------------------------------------------------------
    def prepare_for_create(self, obj: Obj) -> None:
        if self.definition.terminating:
            raise errors.APIError(405, "MethodNotAllowed",
                                  "create not allowed while custom resource definition is terminating")
        version = self._version(obj)
        if version is not None and version.status:
            obj.pop("status", None)
        obj["metadata"]["generation"] = 1

    def default(self, obj: Obj) -> None:
        version = self._version(obj)
        if version is not None and version.schema:
            defaulting.apply(obj, version.schema)

    def validate(self, obj: Obj) -> Causes:
        return self._validate(obj, cel_rules.NO_OLD)

    # -- update ---------------------------------------------------------------------------
    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        version = self._version(new)
        with_status = version is not None and version.status
        if with_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        ignored = ("metadata", "status", "apiVersion", "kind") if with_status else ("metadata", "apiVersion", "kind")
        generation = old["metadata"].get("generation", 1)
        if _without(new, ignored) != _without(old, ignored):
            generation += 1
        new["metadata"]["generation"] = generation

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = self._validate(new, old)
        causes += validation.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes

    def validate_status_update(self, new: Obj, old: Obj) -> Causes:
        causes = self._validate(new, old, meta=False)
        causes += validation.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes

    def status_strategy(self) -> Strategy:
        return StatusStrategy(self)

    # -- the checks -----------------------------------------------------------------------
    def _validate(self, obj: Obj, old: Any, *, meta: bool = True) -> Causes:
        causes: Causes = []
        if meta:
            causes += validation.object_meta(obj.get("metadata") or {}, namespaced=self.namespaced,
                                             name_rule=self.name_rule)
        version = self._version(obj)
        if version is None:
            return causes
        if version.schema:
            body = {k: v for k, v in obj.items() if k != "metadata"}
            causes += schema_validation.validate(body, _without_metadata(version.schema))
            causes += cel_rules.validate(obj, version.schema, old)
        if version.scale is not None:
            causes += _scale_paths(obj, version.scale)
        return causes


def _without(obj: Obj, keys: tuple[str, ...]) -> Obj:
    return {k: v for k, v in obj.items() if k not in keys}


def _without_metadata(schema: Any) -> Any:
    """The root schema minus metadata, which ObjectMeta rules check (name, labels, annotations)."""
    props = schema.get("properties") or {}
    if "metadata" not in props:
        return schema
    trimmed = dict(schema)
    trimmed["properties"] = {k: v for k, v in props.items() if k != "metadata"}
    trimmed["required"] = [r for r in schema.get("required") or () if r != "metadata"]
    return trimmed


def read_path(obj: Any, path: str) -> tuple[Any, bool]:
    """The value at a `.a.b` path (the scale subresource's JSON paths), and whether it is there."""
    node = obj
    for part in path.lstrip(".").split("."):
        if not isinstance(node, dict) or part not in node:
            return None, False
        node = node[part]
    return node, True


def _scale_paths(obj: Obj, scale: Any) -> Causes:
    causes: Causes = []
    for key in ("specReplicasPath", "statusReplicasPath"):
        path = scale.get(key)
        if not path:
            continue
        value, found = read_path(obj, path)
        if not found:
            continue
        where = path.lstrip(".")
        if isinstance(value, bool) or not isinstance(value, int):
            # upstream reads the path with NestedInt64, whose failed read yields 0
            causes.append(validation.invalid(where, 0, "should be an integer"))
        elif value < 0:
            causes.append(validation.invalid(where, value, "should be a non-negative integer"))
        elif value > _INT32_MAX:
            causes.append(validation.invalid(where, value, f"should be less than or equal to {_INT32_MAX}"))
    selector_path = scale.get("labelSelectorPath")
    if selector_path:
        value, found = read_path(obj, selector_path)
        if found and value is not None and not isinstance(value, str):
            causes.append(validation.invalid(selector_path.lstrip("."), value, "must be a string"))
    return causes

