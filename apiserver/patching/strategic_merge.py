"""Strategic merge patch (`application/strategic-merge-patch+json`), kubectl's default patch.

Mirrors apimachinery `strategicpatch.StrategicMergeMapPatch` (patch.go `mergeMap` and friends) with
the patch metadata read from the 1.36 JSON schemas instead of Go struct tags: lists merge by
`x-kubernetes-patch-merge-key` where `x-kubernetes-patch-strategy` says merge, the directives
`$patch`, `$retainKeys`, `$setElementOrder/<f>` and `$deleteFromPrimitiveList/<f>` work as
upstream, and merged list items come out in upstream's order. The patch handler calls `parse` and
`apply`; kubectl's client-side apply patches (three-way diffs) arrive here.

Deliberate differences from the raw library output (see the report of issue #3):
- a field the schema does not know merges as in JSON merge patch (upstream: "unable to find api
  field in struct X for the json field "f"" when both sides hold an object or a list); directives
  that name an unknown field still fail with that upstream error;
- directive keys left inside values taken whole from the patch are dropped from the result, as
  the typed decoding after upstream's merge drops them.
"""

from __future__ import annotations

import decimal
import functools
from typing import Any, NamedTuple

import msgspec

from apiserver import schemas
from apiserver.patching import PatchError, decode_body, go_kind

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER = "$setElementOrder"

# mergepatch errors that interpretStrategicMergePatchError turns into 400 BadRequest.
_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_ORDER_LIST = "invalid patch format of setElementOrder list"
# ...and the one it turns into the generic 422.
_NO_LIST_OF_LISTS = "lists of lists are not supported"


def parse(body: bytes) -> dict[str, Any]:
    """Decode an SMP body as strategicPatchObject does: kjson.UnmarshalStrict into a map, errors
    as 400 with Go's bare message. A null body is an empty patch."""
    try:
        decoded = decode_body(body)
    except ValueError as err:
        raise PatchError.bad_request(str(err)) from None
    if decoded is None:
        return {}
    _check_patch(decoded)
    return decoded


def _check_patch(patch: Any) -> None:
    if not isinstance(patch, dict):
        raise PatchError.bad_request(
            f"json: cannot unmarshal {go_kind(patch)} into Go value of type map[string]interface {{}}")


def apply(doc: dict[str, Any], patch: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
    """Apply `patch` to a copy of `doc`. `schema` is the kind's root definition
    (`schemas.for_kind`); None merges every field as JSON merge patch would."""
    _check_patch(patch)
    original = _copy(doc)
    merged = _merge_map(original, _copy(patch), _Type.of(schema))
    _drop_directive_keys(merged, patch)
    return merged


def _copy(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))


# ---------------------------------------------------------------------------------------------
# Patch metadata from the schemas (the role of PatchMetaFromStruct upstream).

_PATCH_STRATEGY = "x-kubernetes-patch-strategy"
_MERGE_KEY = "x-kubernetes-patch-merge-key"


class _Field(NamedTuple):
    node: dict[str, Any] | None  # the property node as the schema writes it (not resolved)
    strategies: tuple[str, ...]
    merge_key: str


_UNKNOWN_FIELD = _Field(None, (), "")


@functools.cache
def _definition_names() -> dict[int, str]:
    return {id(definition): name for name, definition in schemas.definitions().items()}


class _Type:
    """What the schema says about one value: a struct (`properties`), a map
    (`additionalProperties`), or nothing (None: merged as JSON merge patch would)."""

    __slots__ = ("node",)

    def __init__(self, node: dict[str, Any] | None) -> None:
        self.node = node

    @classmethod
    def of(cls, node: dict[str, Any] | None) -> _Type:
        return cls(schemas.resolve(node) if node else None)

    def go_name(self) -> str:
        name = _definition_names().get(id(self.node), "")
        return name.rsplit(".", 1)[-1]

    def lookup(self, key: str, *, strict: bool) -> _Field:
        """forkedjson.LookupPatchMetadataForStruct: the field's patch strategy and merge key.
        A key the struct lacks is an untyped field, or upstream's error when `strict`."""
        node = self.node
        if node is None:
            return _UNKNOWN_FIELD
        properties = node.get("properties")
        if isinstance(properties, dict):
            prop = properties.get(key)
            if prop is None:
                # encoding/json field matching falls back to a case-insensitive match.
                folded = key.casefold()
                prop = next((p for name, p in properties.items() if name.casefold() == folded), None)
            if prop is None:
                if strict:
                    raise PatchError.internal(
                        f'unable to find api field in struct {self.go_name()} for the json field "{key}"')
                return _UNKNOWN_FIELD
            strategy = prop.get(_PATCH_STRATEGY) or ""
            return _Field(prop, tuple(strategy.split(",")) if strategy else (), prop.get(_MERGE_KEY) or "")
        values = node.get("additionalProperties")
        if isinstance(values, dict):
            return _Field(values, (), "")  # a Go map: every key has the element type, no tags
        return _UNKNOWN_FIELD


def _value_type(field: _Field) -> _Type:
    return _Type.of(field.node)


def _element_type(field: _Field) -> _Type:
    items = field.node.get("items") if field.node else None
    return _Type.of(items if isinstance(items, dict) else None)


def _strategy(field: _Field) -> str:
    """extractRetainKeysPatchStrategy, minus the retainKeys flag the merge side does not need."""
    strategies = field.strategies
    if len(strategies) == 0:
        return ""
    if len(strategies) == 1:
        return "" if strategies[0] == "retainKeys" else strategies[0]
    if len(strategies) == 2 and "retainKeys" in strategies:
        return strategies[1] if strategies[0] == "retainKeys" else strategies[0]
    raise PatchError.internal(f"unexpected patch strategy: {go_value(list(strategies))}")


# ---------------------------------------------------------------------------------------------
# Maps (mergeMap and the directives that act on a whole map).


def _merge_map(original: dict[str, Any], patch: dict[str, Any], typ: _Type) -> dict[str, Any]:
    if DIRECTIVE in patch:
        return _map_directive(patch)
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, typ)
    # Upstream walks the patch in Go's random map order; deletion lists go last here so that a
    # patch adding and deleting through one list always gives the same answer.
    deletions = [key for key in patch if key.startswith(DELETE_FROM_PRIMITIVE_LIST)]
    for key in [key for key in patch if not key.startswith(DELETE_FROM_PRIMITIVE_LIST)]:
        _merge_field(original, key, patch[key], typ, is_delete_list=False)
    for key in deletions:
        name = _directive_target(key, DELETE_FROM_PRIMITIVE_LIST, _BAD_PRIMITIVE_LIST)
        _merge_field(original, name, patch[key], typ, is_delete_list=True)
    return original


def _map_directive(patch: dict[str, Any]) -> dict[str, Any]:
    """handleDirectiveInMergeMap: `$patch: replace` keeps the patch map, `delete` empties it."""
    directive = patch[DIRECTIVE]
    if directive == "replace":
        del patch[DIRECTIVE]
        return patch
    if directive == "delete":
        return {}
    raise PatchError.internal(f"unknown patch type: {go_string(directive)} in map: {go_value(patch)}")


def _directive_target(key: str, prefix: str, error: str) -> str:
    """extractKey: the field a `$prefix/field` directive names."""
    head, slash, target = key.partition("/")
    if not slash or head != prefix:
        raise PatchError.bad_request(error)
    return target


def _merge_field(original: dict[str, Any], key: str, value: Any, typ: _Type, *, is_delete_list: bool) -> None:
    if value is None:
        original.pop(key, None)  # a null deletes (even `$deleteFromPrimitiveList/f: null`)
        return
    if key not in original or _go_type(original[key]) != _go_type(value):
        if not is_delete_list:
            _put_whole(original, key, value)
        return
    current = original[key]
    if isinstance(current, dict):
        field = typ.lookup(key, strict=is_delete_list)
        if _strategy(field) == "replace":
            original[key] = value
        else:
            original[key] = _merge_map(current, value, _value_type(field))
    elif isinstance(current, list):
        field = typ.lookup(key, strict=is_delete_list)
        original[key] = _merge_list_field(current, value, field, is_delete_list)
    else:
        original[key] = value


def _put_whole(original: dict[str, Any], key: str, value: Any) -> None:
    """A value with nothing to merge into: drop its nulls and any map carrying `$patch`."""
    value, keep = _remove_directives(_discard_nulls(value))
    if keep:
        original[key] = value
    else:
        original.pop(key, None)


def _discard_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for v in value.values():
            _discard_nulls(v)
    elif isinstance(value, list):
        for v in value:
            _discard_nulls(v)
    return value


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """removeDirectives: a map holding `$patch` disappears (from its parent map or list)."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for key in list(value):
            inner, keep = _remove_directives(value[key])
            if keep:
                value[key] = inner
            else:
                del value[key]
        return value, True
    if isinstance(value, list):
        kept = []
        for item in value:
            inner, keep = _remove_directives(item)
            if keep:
                kept.append(inner)
        return kept, True
    return value, True


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """applyRetainKeysDirective: clear every key of `original` the `$retainKeys` list lacks."""
    if RETAIN_KEYS not in patch:
        return
    retain = patch.pop(RETAIN_KEYS)
    if not isinstance(retain, list):
        raise PatchError.bad_request(_BAD_RETAIN_KEYS)
    allowed = {key for key in retain if isinstance(key, str)}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if key not in allowed:
            raise PatchError.bad_request(_BAD_RETAIN_KEYS)
    for key in [key for key in original if key not in allowed]:
        del original[key]


def _drop_directive_keys(value: Any, patch: Any = None) -> None:
    """Directive keys left in the result come from the patch, so only what the patch reaches is
    walked: along its map keys, and all of any list it reaches (items move when lists merge). A
    status patch then leaves the pod's spec unvisited. Without `patch`, the whole value."""
    if isinstance(value, dict):
        for key in [k for k in value if k.startswith("$") and _is_directive_key(k)]:
            del value[key]
        if isinstance(patch, dict):
            for key, inner_patch in patch.items():
                if key in value:
                    _drop_directive_keys(value[key], inner_patch)
        else:
            for inner in value.values():
                _drop_directive_keys(inner)
    elif isinstance(value, list):
        for inner in value:
            _drop_directive_keys(inner)


def _is_directive_key(key: str) -> bool:
    return key in (DIRECTIVE, RETAIN_KEYS) or key.startswith(
        (DELETE_FROM_PRIMITIVE_LIST + "/", SET_ELEMENT_ORDER + "/"))


# ---------------------------------------------------------------------------------------------
# Lists (mergeSliceHandler, mergeSlice and the order rules).


def _merge_list_field(current: list[Any], value: list[Any], field: _Field, is_delete_list: bool,
                      backing: _Backing | None = None) -> list[Any]:
    # Deletion lists act the same whatever the field's strategy; other lists merge only when
    # the strategy says so and are replaced otherwise.
    if _strategy(field) == "merge" or is_delete_list:
        return _merge_list(current, value, _element_type(field), field.merge_key, is_delete_list, backing)
    return value


class _Backing:
    """The Go array behind the live list, as `$setElementOrder` later reads it.

    Upstream edits the live slice in place while merging (deleteMatchingEntries shifts the
    items after a deleted one left, appends fill the freed cells) and then orders the result by
    the *original slice header*, which now shows those edits. To order items exactly as
    kube-apiserver does, the same cells are tracked here: `cells` is what that header sees."""

    def __init__(self, items: list[Any]) -> None:
        self.cells = list(items)
        self.length = len(items)

    def delete(self, index: int) -> None:
        self.cells[index:self.length - 1] = self.cells[index + 1:self.length]
        self.length -= 1

    def put(self, index: int, item: Any) -> None:
        if index < len(self.cells):
            self.cells[index] = item

    def append(self, item: Any) -> None:
        self.put(self.length, item)
        self.length += 1


def _merge_list(original: list[Any], patch: list[Any], element: _Type, merge_key: str,
                is_delete_list: bool, backing: _Backing | None = None) -> list[Any]:
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    if kind != "map":
        if is_delete_list:
            doomed = {_identity(v) for v in patch}
            return [v for v in original if _identity(v) not in doomed]
        merged = _dedupe(original + patch)
    else:
        if not merge_key:
            raise PatchError.internal("cannot merge lists without merge key for struct")
        original, patch, replaced = _split_special_elements(original, patch, merge_key, backing)
        merged = _merge_items(original, patch, merge_key, element, None if replaced else backing)
    if merge_key:
        patch_items, server_only = _partition_maps(merged, patch, merge_key)
    else:
        patch_items, server_only = _partition_scalars(merged, patch)
    return _normalize_order(patch_items, server_only, patch, original, merge_key, kind)


def _split_special_elements(original: list[Any], patch: list[Any], merge_key: str,
                            backing: _Backing | None) -> tuple[list[Any], list[Any], bool]:
    """mergeSliceWithSpecialElements: `$patch: delete` items delete by merge key, one
    `$patch: replace` item makes the rest of the patch list the whole new list."""
    if not any(DIRECTIVE in item for item in patch):
        return original, patch, False
    original = list(original)
    plain: list[Any] = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == "delete":
            if merge_key not in item:
                raise PatchError.internal(_no_merge_key(item, merge_key))
            doomed = _identity(item[merge_key])
            while (at := _index_by_key(original, merge_key, doomed)) >= 0:
                del original[at]
                if backing is not None:
                    backing.delete(at)
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise PatchError.internal("merging lists cannot yet be specified in the patch")
        else:
            raise PatchError.internal(f"unknown patch type: {go_string(directive)} in map: {go_value(item)}")
    if replace:
        return plain, [], True
    return original, plain, False


def _index_by_key(items: list[Any], merge_key: str, identity: Any) -> int:
    """findMapInSliceBasedOnKeyValue: the first item whose merge key has this value, or -1."""
    return next((i for i, item in enumerate(items)
                 if merge_key in item and _identity(item[merge_key]) == identity), -1)


def _merge_items(original: list[Any], patch: list[Any], merge_key: str, element: _Type,
                 backing: _Backing | None) -> list[Any]:
    """mergeSliceWithoutSpecialElements: merge items that share the merge key, append the rest."""
    merged = list(original)
    for item in patch:
        if merge_key not in item:
            raise PatchError.internal(_no_merge_key(item, merge_key))
        at = _index_by_key(merged, merge_key, _identity(item[merge_key]))
        if at >= 0:
            merged[at] = _merge_map(merged[at], item, element)
            if backing is not None:
                backing.put(at, merged[at])
        else:
            merged.append(item)
            if backing is not None:
                backing.append(item)
    return merged


def _merge_ordered_lists(original: dict[str, Any], patch: dict[str, Any], typ: _Type) -> None:
    """mergePatchIntoOriginal: merge each list that has a `$setElementOrder/<f>` and put its
    items in that order (precedence: $setElementOrder, then the patch, then the live list)."""
    for key in [key for key in patch if key.startswith(SET_ELEMENT_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise PatchError.internal(_bad_arg_type([], order))
        name = _directive_target(key, SET_ELEMENT_ORDER, _BAD_ORDER_LIST)
        found_original, found_patch = name in original, name in patch
        original_list, patch_list = original.get(name), patch.get(name)
        if found_original and not isinstance(original_list, list):
            raise PatchError.internal(_bad_arg_type([], original_list))
        if found_patch and not isinstance(patch_list, list):
            raise PatchError.internal(_bad_arg_type([], patch_list))
        field = typ.lookup(name, strict=True)
        merge_key = field.merge_key
        _strategy(field)  # an impossible strategy list fails here too, as upstream
        _check_order(patch_list or [], order, merge_key)
        live_cells = _Backing(original_list or [])
        if found_original and found_patch:
            merged = _merge_list_field(original_list, patch_list, field, False, live_cells)
        elif found_original:
            merged = original_list
        elif found_patch:
            merged, _ = _remove_directives(patch_list)
        else:
            continue
        if merge_key:
            patch_items, server_only = _partition_maps(merged, order, merge_key)
        else:
            patch_items, server_only = _partition_scalars(merged, order)
        kind = _element_kind(original_list or [], patch_list or [])
        original[name] = _normalize_order(patch_items, server_only, order, live_cells.cells, merge_key, kind)
        patch.pop(name, None)


def _check_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """validatePatchWithSetOrderList: the patch's items appear in the order list, in its order."""
    if not order or not patch_list:
        return
    candidates = _split_deletions(patch_list)[0] if merge_key else patch_list
    p = o = 0
    while p < len(candidates) and o < len(order):
        if isinstance(candidates[p], dict) and DIRECTIVE in candidates[p]:
            p += 1
            continue
        if _merge_key_equal(candidates[p], order[o], merge_key):
            p += 1
        o += 1
    if p < len(candidates) and o >= len(order):
        raise PatchError.internal(
            f"The order in patch list:\n{go_value(patch_list)}\n doesn't match "
            f"{SET_ELEMENT_ORDER} list:\n{go_value(order)}\n")


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _identity(left) == _identity(right)
    for item in (left, right):
        if not isinstance(item, dict):
            raise PatchError.internal(_bad_arg_type({}, item))
        if merge_key not in item:
            raise PatchError.internal(_no_merge_key(item, merge_key))
    return _identity(left[merge_key]) == _identity(right[merge_key])


def _element_kind(*lists: list[Any]) -> str:
    """sliceElementType: every element has one Go type, and it is not a list."""
    kind = None
    for items in lists:
        for item in items:
            item_kind = _go_type(item)
            if kind is None:
                if item_kind == "slice":
                    raise PatchError.unprocessable(_NO_LIST_OF_LISTS)
                kind = item_kind
            elif item_kind != kind:
                raise PatchError.internal(f"list element types are not identical: {go_value(list(lists))}")
    if kind is None:
        raise PatchError.internal("no elements in any of the given slices")
    return kind


def _partition_scalars(merged: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    wanted = {_identity(v) for v in by}
    inside = [v for v in merged if _identity(v) in wanted]
    outside = [v for v in merged if _identity(v) not in wanted]
    return inside, outside


def _partition_maps(merged: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    wanted = set()
    for index, item in enumerate(by):
        if not isinstance(item, dict):
            raise PatchError.internal(f"value for key {index} is not a map")
        if merge_key in item:
            wanted.add(_identity(item[merge_key]))
    inside: list[Any] = []
    outside: list[Any] = []
    for item in merged:
        if not isinstance(item, dict):
            raise PatchError.internal(_bad_arg_type({}, item))
        if merge_key not in item:
            raise PatchError.internal(_no_merge_key(item, merge_key))
        (inside if _identity(item[merge_key]) in wanted else outside).append(item)
    return inside, outside


def _normalize_order(patch_items: list[Any], server_only: list[Any], patch_order: list[Any],
                     server_order: list[Any], merge_key: str, kind: str) -> list[Any]:
    """normalizeElementOrder + mergeSortedSlice: sort the patch's items by the patch order and
    the server-only items by the live order, then interleave them. A server-only item goes first
    only when both it and the next patch item are in the live list and it came first there; so
    new items from a patch without `$setElementOrder` land before the remaining live items."""
    patch_items = _sort_by(patch_items, patch_order, merge_key, kind)
    server_only = _sort_by(server_only, server_order, merge_key, kind)
    live = _Positions(server_order, merge_key, kind)
    merged: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if j >= len(patch_items):
            merged.append(server_only[i])
            i += 1
        elif i >= len(server_only):
            merged.append(patch_items[j])
            j += 1
        else:
            left, right = live.index(server_only[i]), live.index(patch_items[j])
            if 0 <= left < right:
                merged.append(server_only[i])
                i += 1
            else:
                merged.append(patch_items[j])
                j += 1
    return merged


def _sort_by(items: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    """normalizeSliceOrder: a stable sort by position in `order`; `$patch: delete` items last."""
    deletions: list[Any] = []
    if kind == "map":
        _require_merge_key(items, merge_key)
        _require_merge_key(order, merge_key)
        items, deletions = _split_deletions(items)
    positions = _Positions(order, merge_key, kind)
    return sorted(items, key=positions.index) + deletions


def _require_merge_key(items: list[Any], merge_key: str) -> None:
    for item in items:
        if not isinstance(item, dict):
            raise PatchError.internal(_bad_arg_type({}, item))
        if merge_key not in item:
            raise PatchError.internal(_no_merge_key(item, merge_key))


def _split_deletions(items: list[Any]) -> tuple[list[Any], list[Any]]:
    """extractToDeleteItems."""
    kept: list[Any] = []
    deletions: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            raise PatchError.internal(_bad_arg_type({}, item))
        (deletions if item.get(DIRECTIVE) == "delete" else kept).append(item)
    return kept, deletions


class _Positions:
    """`index()` of upstream: where an item (by merge key, or by value) first appears in a list.
    Items missing from the list get -1, which sorts them first, as Go's comparator does."""

    def __init__(self, items: list[Any], merge_key: str, kind: str) -> None:
        self.by_map = kind == "map"
        self.merge_key = merge_key
        self.first: dict[Any, int] = {}
        for position, item in enumerate(items):
            self.first.setdefault(self._identity_of(item), position)

    def _identity_of(self, item: Any) -> Any:
        if self.by_map:
            return _identity(item.get(self.merge_key) if isinstance(item, dict) else None)
        return _identity(item)

    def index(self, item: Any) -> int:
        return self.first.get(self._identity_of(item), -1)


def _dedupe(items: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    unique = []
    for item in items:
        identity = _identity(item)
        if identity not in seen:
            seen.add(identity)
            unique.append(item)
    return unique


# ---------------------------------------------------------------------------------------------
# Go's view of JSON values: dynamic types, interface equality and fmt's %v, for the messages.


def _go_type(value: Any) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map"
    return "slice"


def _identity(value: Any) -> Any:
    """A hashable key equal exactly when Go's interface comparison is (1 and 1.0 differ)."""
    if isinstance(value, (dict, list)):
        return ("json", msgspec.json.encode(value, order="sorted"))
    return (_go_type(value), value)


_GO_TYPE_NAMES = {"map": "map[string]interface {}", "slice": "[]interface {}", "nil": "%!s(<nil>)"}


def _bad_arg_type(expected: Any, actual: Any) -> str:
    """mergepatch.ErrBadArgType, with reflect's type names."""
    def name(value: Any) -> str:
        kind = _go_type(value)
        return _GO_TYPE_NAMES.get(kind, kind)
    return f"expected a {name(expected)}, but received a {name(actual)}"


def _no_merge_key(item: dict[str, Any], merge_key: str) -> str:
    """mergepatch.ErrNoMergeKey."""
    return f"map: {go_value(item)} does not contain declared merge key: {merge_key}"


def go_string(value: Any) -> str:
    """fmt's %s: a string as is, anything else as `%!s(type=value)`."""
    if isinstance(value, str):
        return value
    if value is None:
        return "%!s(<nil>)"
    return f"%!s({_go_type(value)}={go_value(value)})"


def go_value(value: Any) -> str:
    """fmt's %v of a decoded JSON value: `map[k:v ...]` with sorted keys, `[a b]`, `<nil>`."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    return "[" + " ".join(go_value(v) for v in value) + "]"


def _go_float(value: float) -> str:
    """strconv 'g' with the shortest precision: %e when the exponent is < -4 or >= 6."""
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign, digits, exponent = decimal.Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    magnitude = len(digits) + exponent - 1
    prefix = "-" if sign else ""
    if magnitude < -4 or magnitude >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if magnitude < 0 else '+'}{abs(magnitude):02d}"
    if magnitude < 0:
        return f"{prefix}0.{'0' * (-magnitude - 1)}{text}"
    whole, fraction = text[:magnitude + 1].ljust(magnitude + 1, "0"), text[magnitude + 1:]
    return f"{prefix}{whole}{'.' + fraction if fraction else ''}"
