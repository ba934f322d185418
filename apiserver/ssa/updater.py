"""The ownership engine: who owns which fields after an Update or an Apply (structured-merge-diff's
Updater), over field sets keyed by manager identity.

update(): every field the write added or modified is taken from the other managers (or, for an
apply without force, reported as a conflict); removed fields leave every owner. Update() then gives
the writer what it changed; Apply() gives the applier exactly its configuration's fields, and prunes
what the applier owned last time and no longer applies, unless somebody else still owns it.
Callers: `apply.apply` and `managed_fields.on_update`; identities and encoding are `managers.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apiserver.ssa import compare as comparing
from apiserver.ssa import fieldsets, merge, remove, shapes, to_set


@dataclass
class Owned:
    fields: fieldsets.FieldSet
    api_version: str
    applied: bool


Managers = dict[Any, Owned]  # by manager identity (managers.Identity); the engine only compares them


class Conflicts(Exception):
    """Fields an apply would take from other managers, by manager identity."""

    def __init__(self, by_manager: dict[Any, Owned]) -> None:
        super().__init__(f"{len(by_manager)} managers conflict")
        self.by_manager = by_manager


@dataclass
class Engine:
    """The schema of one kind, the fields nobody may own here (status on the main resource…)
    and, for built-in kinds, the Go zero values `compare` must see."""
    node: shapes.Node
    ignored: fieldsets.FieldSet
    zero_of: comparing.ZeroOf | None = None

    def compare(self, old: Any, new: Any) -> comparing.Comparison:
        return comparing.compare(old, new, self.node, self.zero_of)

    def field_set(self, value: Any, *, strict: bool = False) -> fieldsets.FieldSet:
        return to_set.field_set(value, self.node, strict=strict)

    def _update(self, old: Any, new: Any, managers: Managers, writer: Any,
                force: bool) -> comparing.Comparison:
        """Take changed fields from the other managers (in place) and drop removed ones."""
        full = self.compare(old, new)
        seen = full.excluding(self.ignored)
        changed = seen.changed()
        conflicts: Managers = {}
        for identity, owned in managers.items():
            if identity == writer:
                continue
            taken = fieldsets.intersection(owned.fields, changed)
            if taken:
                conflicts[identity] = Owned(taken, owned.api_version, owned.applied)
        if conflicts and not force:
            raise Conflicts(conflicts)
        for identity, owned in list(managers.items()):
            if identity == writer:
                continue
            rest = fieldsets.difference(owned.fields, conflicts[identity].fields) if identity in conflicts \
                else owned.fields
            rest = fieldsets.difference(rest, seen.removed)
            if rest:
                managers[identity] = Owned(rest, owned.api_version, owned.applied)
            else:
                del managers[identity]
        return full

    def update(self, live: Any, new: Any, managers: Managers, writer: Any, api_version: str) -> Managers:
        """Ownership after a non-apply write of `new` over `live` by `writer`."""
        managers = dict(managers)
        full = self._update(live, new, managers, writer, force=True)
        mine = managers[writer].fields if writer in managers else {}
        mine = fieldsets.difference(fieldsets.union(fieldsets.union(mine, full.modified), full.added), full.removed)
        mine = fieldsets.recursive_difference(mine, self.ignored)
        if mine:
            managers[writer] = Owned(mine, api_version, False)
        else:
            managers.pop(writer, None)
        return managers

    def apply(self, live: Any, config: Any, managers: Managers, applier: Any, api_version: str,
              force: bool) -> tuple[Any, Managers, bool]:
        """(the new object, ownership, whether the object changed). Raises Conflicts."""
        managers = dict(managers)
        applied_set = fieldsets.recursive_difference(self.field_set(config, strict=True), self.ignored)
        merged = merge.merge(live, config, self.node)
        last = managers.get(applier)
        managers[applier] = Owned(applied_set, api_version, True)
        # Pruning can only remove what the applier owned and dropped; applying a superset is a no-op.
        if last is not None and fieldsets.difference(last.fields, applied_set):
            merged = self._prune(merged, managers, last.fields)
        self._update(live, merged, managers, applier, force)
        return merged, managers, not comparing.same(live, merged)

    def _prune(self, merged: Any, managers: Managers, last: fieldsets.FieldSet) -> Any:
        """Remove what the applier owned last time and applies no more, unless another manager
        (or its own new configuration) still owns it."""
        ensure = fieldsets.ensure_named_fields_are_members
        last_all = ensure(last, self.node)
        pruned = remove.remove_items(merged, last_all, self.node)
        owned: fieldsets.FieldSet = {}
        for entry in managers.values():
            owned = fieldsets.union(owned, entry.fields)
        merged_set = ensure(self.field_set(merged), self.node)
        kept = fieldsets.union(ensure(self.field_set(pruned), self.node), ensure(owned, self.node))
        pruned = remove.remove_items(merged, fieldsets.difference(merged_set, kept), self.node)
        # Put back what pruning took that this applier never owned (unowned or defaulted fields).
        pruned_set = ensure(self.field_set(pruned), self.node)
        dangling = fieldsets.intersection(fieldsets.difference(merged_set, pruned_set), last_all)
        return remove.remove_items(merged, dangling, self.node)
