"""The admission chain: mutating plugins in order, then validating plugins in order.

`Chain.admit(attrs)` runs every mutating plugin (each may change `attrs.object`); when one asks
for it (a MutatingAdmissionPolicy with reinvocationPolicy IfNeeded whose input changed), the
whole mutating pass runs once more, as upstream's reinvoker does: in-tree plugins are
idempotent and run again, policies decide themselves whether to. `Chain.validate(attrs)` runs
every validating plugin on the final object. A plugin refuses by raising `errors.Rejection`.
`assembly.py` chooses the plugins and their order; `apiserver/writing.py` calls the two passes
at the points its docstring names.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from admission.attributes import Attributes


class MutatingPlugin(Protocol):
    name: str

    def admit(self, attrs: Attributes) -> None: ...


class ValidatingPlugin(Protocol):
    name: str

    def validate(self, attrs: Attributes) -> None: ...


class Chain:
    def __init__(self, mutating: Sequence[MutatingPlugin], validating: Sequence[ValidatingPlugin]):
        self.mutating = list(mutating)
        self.validating = list(validating)

    def admit(self, attrs: Attributes) -> None:
        for plugin in self.mutating:
            plugin.admit(attrs)
        if attrs.reinvocation.should_reinvoke:
            attrs.reinvocation.is_reinvoke = True
            attrs.reinvocation.should_reinvoke = False
            for plugin in self.mutating:
                plugin.admit(attrs)

    def validate(self, attrs: Attributes) -> None:
        for plugin in self.validating:
            plugin.validate(attrs)
