"""Which objects a LIST (or a watch's initial events, or a DeleteCollection) returns.

Reads the selection from the query (label and field selectors, limit, continue, resourceVersion
and resourceVersionMatch with kube's rules), then pages through the store, decoding an object only
when a selector must look inside it. Called by `handlers/list.py`, `handlers/watch.py` and
`handlers/delete.py`; the store does the snapshot and pagination at a revision.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Mapping

import msgspec

from apiserver import errors, fields, labels, sharding
from apiserver.context import Endpoint
from storage import Record, continue_tokens, errors as storage_errors

_PAGE = 500


@dataclass
class Selection:
    label: Any  # labels.Selector
    field: Any  # fields.Selector
    limit: int
    continue_token: str | None
    revision: int | None  # None: the current state
    shard: sharding.ShardFilter | None = None  # ?shardSelector= (KEP-5866)

    @property
    def selects_everything(self) -> bool:
        return self.label.empty and self.field.empty and self.shard is None

    @property
    def needs_objects(self) -> bool:  # the shard filter reads stored bytes, not decoded objects
        return not (self.label.empty and self.field.empty)

    def matches(self, obj: dict[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        return self.label.matches(meta.get("labels") or {}) and self.field.matches(obj)


def parse_int(query: Mapping[str, str], name: str) -> int:
    raw = query.get(name, "")
    if not raw:
        return 0
    try:
        value = int(raw)
    except ValueError:
        raise errors.bad_request(f'invalid value for {name}: "{raw}"') from None
    return value


def label_selector(query: Mapping[str, str]) -> Any:
    try:
        return labels.parse(query.get("labelSelector", ""))
    except labels.SelectorError as exc:
        raise errors.bad_request(str(exc)) from None


def field_selector(ep: Endpoint, query: Mapping[str, str]) -> Any:
    try:
        return fields.parse(
            query.get("fieldSelector", ""),
            allowed=ep.resource.field_selectors,
            aliases=ep.resource.field_selector_aliases,
        )
    except fields.SelectorError as exc:
        raise errors.bad_request(str(exc)) from None


def selection(ep: Endpoint, query: Mapping[str, str], *, for_watch: bool = False) -> Selection:
    limit = 0 if for_watch else max(parse_int(query, "limit"), 0)
    token = None if for_watch else (query.get("continue") or None)
    return Selection(
        label=label_selector(query),
        field=field_selector(ep, query),
        limit=limit,
        continue_token=token,
        revision=None if for_watch else list_revision(ep, query, limit, token),
        shard=sharding.from_query(ep.server, query),
    )


def list_revision(ep: Endpoint, query: Mapping[str, str], limit: int, token: str | None) -> int | None:
    """kube's resourceVersion/resourceVersionMatch rules for LIST; None means the current state."""
    rv = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    causes = _list_option_errors(query, rv, match)
    if causes:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", causes)
    if token:
        if rv and rv != "0":
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        return None
    if not rv or rv == "0":
        return None
    revision = parse_revision(rv)
    current = ep.server.store.revision
    if revision > current:
        raise too_large(revision, current)
    if match == "Exact" or (not match and limit):
        return revision
    return None


def _list_option_errors(query: Mapping[str, str], rv: str, match: str) -> list[dict[str, str]]:
    """kube's ValidateListOptions for a LIST, all causes at once: the handler answers them as one
    422 ListOptions Invalid before the storage looks at anything."""
    def forbidden(field: str, why: str) -> dict[str, str]:
        return errors.field_error("FieldValueForbidden", field, f"Forbidden: {why}")

    causes = []
    if match:
        if not rv:
            causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if query.get("continue"):
            causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
        if match not in ("Exact", "NotOlderThan"):
            causes.append(errors.field_error(
                "FieldValueNotSupported", "resourceVersionMatch",
                f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan", ""'))
        if match == "Exact" and rv == "0":
            causes.append(forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    if "sendInitialEvents" in query:
        causes.append(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return causes


def parse_revision(rv: str) -> int:
    try:
        revision = int(rv)
        if revision < 0:
            raise ValueError
    except ValueError:
        raise errors.bad_request(f'invalid resource version "{rv}"') from None
    return revision


async def catch_up(ep: Endpoint, query: Mapping[str, str]) -> None:
    """Wait (up to 3 s, as kube's watch cache does) until the store has published the revision a
    request names. A LIST's read may see a commit a moment before its events are published, so a
    client can hold a resourceVersion a little ahead of `store.revision`; only one still ahead after
    the wait is "too large"."""
    rv = query.get("resourceVersion", "")
    if not rv.isdigit():
        return
    wanted, store = int(rv), ep.server.store
    deadline = asyncio.get_running_loop().time() + 3.0
    while store.revision < wanted and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.005)


def too_large(revision: int, current: int) -> errors.APIError:
    return errors.APIError(
        504,
        "Timeout",
        f"Too large resource version: {revision}, current: {current}",
        {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
         "retryAfterSeconds": 1},
    )


@dataclass
class Page:
    records: list[Record]
    objects: list[dict[str, Any]] | None  # decoded, when a selector needed them
    revision: int
    continue_token: str | None
    remaining: int | None


def collect(ep: Endpoint, sel: Selection, *, decode: bool = False) -> Page:
    """The selected records, one page of `sel.limit` (0: all), at the selection's revision."""
    indexed = _collect_indexed(ep, sel, decode) or _collect_sharded(ep, sel, decode)
    if indexed is not None:
        return indexed
    store = ep.server.store
    prefix = ep.prefix()
    want_objects = decode or sel.needs_objects
    records: list[Record] = []
    objects: list[dict[str, Any]] = []
    token = sel.continue_token
    revision = sel.revision
    try:
        while True:
            chunk = sel.limit - len(records) if sel.limit else 0
            if not sel.selects_everything and chunk:
                chunk = max(chunk, _PAGE)  # most objects may not match: read ahead in store pages
            result = store.list(prefix, revision=revision, limit=chunk, continue_token=token)
            revision = result.revision
            stopped_at = _take(sel, result.records, records, objects if want_objects else None)
            # Stopped mid-chunk: the next page starts after the last record taken.
            token = continue_tokens.encode(result.revision, stopped_at[len(prefix):]) if stopped_at \
                else result.continue_token
            if not token or (sel.limit and len(records) >= sel.limit):
                break
    except storage_errors.Expired as exc:
        if sel.continue_token:
            raise errors.from_storage(exc, ep.resource.resource, ep.resource.group, "") from None
        raise errors.expired("The resourceVersion for the provided list is too old.") from None
    except storage_errors.InvalidContinue as exc:
        raise errors.from_storage(exc, ep.resource.resource, ep.resource.group, "") from None
    remaining = result.remaining if (sel.selects_everything and token) else None
    return Page(records, objects if want_objects else None, revision or store.revision, token, remaining)


def _collect_sharded(ep: Endpoint, sel: Selection, decode: bool) -> Page | None:
    """A whole shard at the current state, reading only its members' values (one snapshot).

    The members come from the label index's uid hashes when it can say (`shard_plan`); otherwise
    the shard filter decides from each key's hash memo, copying a value only to hash a write it has
    not seen. Pages and older revisions take the store path.
    """
    if not _whole_current_shard(sel):
        return None
    plan = shard_plan(ep, sel)
    if plan is not None:
        return shard_page(ep, sel, plan.members, plan.revision, decode=decode)
    assert sel.shard is not None
    result = ep.server.store.list_where(ep.prefix(), sel.shard.keep)
    return _members_page(sel, result.records, result.revision, decode)


def _whole_current_shard(sel: Selection) -> bool:
    return sel.shard is not None and not sel.limit and sel.revision is None and not sel.continue_token


@dataclass(frozen=True)
class ShardPlan:
    revision: int
    members: list[str]  # the shard's keys at `revision`, in key order


def shard_plan(ep: Endpoint, sel: Selection) -> ShardPlan | None:
    """The keys of a whole uid shard at the current revision, from the label index's uid hashes,
    or None when the index cannot say (not caught up, a namespace shard, a page, an old revision).
    The values can then be read in steps (`shard_page`), all at that revision."""
    if not _whole_current_shard(sel):
        return None
    assert sel.shard is not None
    index = ep.server.label_index
    if index is None or sel.shard.selector.field != sharding.UID:
        return None
    members = index.shard_members(ep.prefix(), sel.shard.selector)
    # The index has applied every published revision (shard_members checks), so this is its state.
    return None if members is None else ShardPlan(ep.server.store.revision, members)


def shard_page(ep: Endpoint, sel: Selection, keys: list[str], revision: int, *, decode: bool = False) -> Page:
    """Some of a shard plan's members as they were at `revision`, filtered by the other selectors."""
    try:
        found = ep.server.store.get_many_at(keys, ep.prefix(), revision)
    except storage_errors.Expired:
        raise errors.expired("The resourceVersion for the provided list is too old.") from None
    return _members_page(sel, found, revision, decode)


def _members_page(sel: Selection, members: list[Record], revision: int, decode: bool) -> Page:
    """A shard's members (membership already decided) through the selection's other filters."""
    records: list[Record] = []
    objects: list[dict[str, Any]] = []
    want_objects = decode or sel.needs_objects
    _take(dataclasses.replace(sel, shard=None), members, records, objects if want_objects else None)
    return Page(records, objects if want_objects else None, revision, None, None)


def _collect_indexed(ep: Endpoint, sel: Selection, decode: bool) -> Page | None:
    """A first page at the current state read through the label index, when it can answer.

    Only the objects whose labels match are read (and decoded, when another selector or the
    caller needs them). The index has applied every committed revision and nothing runs between
    this check and the reads, so the page is the store's state at `store.revision`. Later pages
    (continue) and lists at a given revision take the store path.
    """
    index = ep.server.label_index
    if index is None or sel.revision is not None or sel.continue_token or sel.label.empty:
        return None
    prefix = ep.prefix()
    keys = index.candidates(prefix, sel.label, sel.limit or 0)
    if keys is None:
        return None
    store = ep.server.store
    want_objects = decode or sel.needs_objects
    # Read lazily: a page (`limit`) stops reading at its last record plus one, instead of every
    # candidate (a LIST ?labelSelector=…&limit=1 polled over 10,000 matching objects read them all).
    found = (record for record in map(store.get, keys) if record is not None)
    records: list[Record] = []
    objects: list[dict[str, Any]] = []
    stopped_at = _take(sel, found, records, objects if want_objects else None)
    token = continue_tokens.encode(store.revision, stopped_at[len(prefix):]) if stopped_at else None
    return Page(records, objects if want_objects else None, store.revision, token, None)


def _take(sel: Selection, candidates: Iterable[Record], records: list[Record],
          objects: list[dict[str, Any]] | None) -> str | None:
    """Append the candidates that `sel` selects (decoded into `objects` when given) until its limit.

    Returns the key of the last record taken if the limit stopped it before the end, else None.
    Candidates may come lazily: past the limit only one more is drawn, to know whether any follow.
    """
    if sel.shard is not None:
        candidates = sel.shard.select(list(candidates))
    remaining = iter(candidates)
    for record in remaining:
        if objects is not None:
            obj = msgspec.json.decode(record.value)
            if not sel.matches(obj):
                continue
            objects.append(obj)
        records.append(record)
        if sel.limit and len(records) >= sel.limit:
            return record.key if next(remaining, None) is not None else None
    return None


def list_metadata(page: Page) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": str(page.revision)}
    if page.continue_token:
        meta["continue"] = page.continue_token
        if page.remaining is not None:
            meta["remainingItemCount"] = page.remaining
    return meta
