"""The per-kind rules every write goes through, as a small class with a fixed hook order.

Create:  default(obj) → (admission) → create_warnings(obj) → prepare_for_create(obj) → validate(obj)
         → warnings(obj)
Update:  default(new) → (admission) → prepare_for_update(new, old) → validate_update(new, old)
         → warnings(new, old)
Status:  the same hooks on `status_strategy()`, whose prepare_for_update keeps everything but status.

Hooks may mutate the object they are given; `validate*` return field causes (see `errors.field_error`)
and never raise. `create_warnings(obj)` runs just before `prepare_for_create` and names what that hook
is about to change (upstream adds such Warnings to the request context while preparing). The generic
rules live here; `apiserver/kinds/<kind>.py` subclass and override only what their kind changes.
`kinds/__init__.py` maps each resource to its strategy.
"""

from __future__ import annotations

from typing import Any

from apiserver import errors, validation

Obj = dict[str, Any]
Causes = list[dict[str, str]]


class Strategy:
    """Generic behaviour of a stored kind; correct for any kind without special rules."""

    # Who is writing (an `auth.User`), as upstream's hooks read it from the request context; set by
    # `app.py` per request. Only kinds that record their requester (CSRs) look at it.
    requester: Any = None

    def __init__(self, *, namespaced: bool, has_status: bool, name_rule: str = "subdomain") -> None:
        self.namespaced = namespaced
        self.has_status = has_status
        # "subdomain" (DNS-1123 subdomain, most kinds), "label" (DNS-1123 label), "path" (only / and % barred).
        self.name_rule = name_rule

    @property
    def tracks_generation(self) -> bool:
        """Kinds with a status subresource count spec changes in metadata.generation."""
        return self.has_status

    # -- create ---------------------------------------------------------------------------
    def create_warnings(self, obj: Obj) -> list[str]:
        """Warnings about `obj` as prepare_for_create will find it; sent with the response."""
        return []

    def warnings(self, obj: Obj, old: Obj | None = None) -> list[str]:
        """WarningsOnCreate (old is None) / WarningsOnUpdate for a valid object; sent with the response."""
        return []

    def prepare_for_create(self, obj: Obj) -> None:
        if self.has_status:
            obj.pop("status", None)
        if self.tracks_generation:
            obj["metadata"]["generation"] = 1

    def default(self, obj: Obj) -> None:
        """Fill defaults the real API types declare (`+default`, SetDefaults_*)."""

    def validate(self, obj: Obj) -> Causes:
        return validation.object_meta(obj.get("metadata") or {}, namespaced=self.namespaced, name_rule=self.name_rule)

    # -- update ---------------------------------------------------------------------------
    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        if self.has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        if self.tracks_generation:
            generation = old["metadata"].get("generation", 1)
            if _spec_of(new) != _spec_of(old):
                generation += 1
            new["metadata"]["generation"] = generation

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        causes = self.validate(new)
        causes += validation.object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        return causes

    def canonicalize(self, obj: Obj) -> None:
        """Normalize the object after validation, once its final name is known (upstream's
        Canonicalize; the namespace name label is the one use)."""

    def status_strategy(self) -> "Strategy":
        return StatusStrategy(self)


def _spec_of(obj: Obj) -> Obj:
    """Everything that counts as spec for generation: all but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


class StatusStrategy(Strategy):
    """Writes through `/status`: only `.status` changes; metadata and spec come from the old object."""

    def __init__(self, main: Strategy) -> None:
        super().__init__(namespaced=main.namespaced, has_status=True, name_rule=main.name_rule)
        self.main = main

    def prepare_for_create(self, obj: Obj) -> None:  # pragma: no cover - status is never created
        raise errors.method_not_allowed()

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        status = new.get("status")
        keep_meta = new.get("metadata") or {}
        new.clear()
        new.update({k: v for k, v in old.items() if k != "status"})
        new["metadata"] = dict(old["metadata"])
        # Upstream lets a status write carry resourceVersion (as precondition) and nothing else of metadata.
        if "resourceVersion" in keep_meta:
            new["metadata"]["resourceVersion"] = keep_meta["resourceVersion"]
        if status is not None:
            new["status"] = status

    def default(self, obj: Obj) -> None:
        self.main.default(obj)

    def validate_update(self, new: Obj, old: Obj) -> Causes:
        return self.main.validate_status_update(new, old) if hasattr(self.main, "validate_status_update") else []
