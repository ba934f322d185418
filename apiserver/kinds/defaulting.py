"""The strategy base for kinds whose API types declare defaults, in upstream's order.

kube-apiserver applies a kind's defaults while decoding the request body, before admission and
PrepareForCreate/PrepareForUpdate, so those hooks (QoS class, generation bump, selector
generation) already see a defaulted object: `writing.prepare_create/prepare_update` call
`default()` first, and again after a mutating policy handed back a new object (as a webhook's
patched object is decoded, and so defaulted, again). Subclasses in this package set
`counts_generation` where upstream differs from "has a status subresource".
"""

from __future__ import annotations

from apiserver.strategy import Obj, Strategy


class DefaultingStrategy(Strategy):
    # None: the base rule (kinds with a status subresource count spec changes); False/True: forced.
    counts_generation: bool | None = None

    @property
    def tracks_generation(self) -> bool:
        if self.counts_generation is None:
            return self.has_status
        return self.counts_generation

    def prepare_for_create(self, obj: Obj) -> None:
        obj.setdefault("metadata", {})
        super().prepare_for_create(obj)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        new.setdefault("metadata", {})
        super().prepare_for_update(new, old)


class NoGenerationStrategy(DefaultingStrategy):
    """Kinds with a status subresource whose metadata.generation upstream never sets (nodes, PVs…)."""

    counts_generation = False
