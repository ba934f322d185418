"""The suite's checks as data, and the decorators that register them.

A check is an `async def check(ctx) -> None`: it passes by returning, fails by raising (a plain
`assert` with a message, or any exception), and skips by calling `ctx.skip(reason)`. Two kinds:
- `@conformance(codename, area=...)`: checks the behaviour of one upstream `[Conformance]` test,
  named exactly as its `codename` in upstream's test/conformance/testdata/conformance.yaml, so a
  report can be set beside a sonobuoy run;
- `@feature(name, area=..., kep=..., gates=...)`: a 1.36 feature check, tagged with its KEP and
  the feature gates it needs; the runner skips it (and says why) when a gate is off on the cluster.

`all_checks()` imports every module under `conformance/checks/` once and returns the checks in a
stable order. The runner and the CLI call it; check modules only use the decorators.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable

if TYPE_CHECKING:
    from conformance.context import Context

CheckFn = Callable[["Context"], Awaitable[None]]
CONFORMANCE = "conformance"
FEATURE = "feature"


@dataclass(frozen=True)
class Check:
    name: str  # conformance: upstream's codename verbatim; feature: "[Feature:<Gate>] <what it checks>"
    area: str  # a row of the summary table: "api-machinery", "apps", "node", "scheduling", "dra", ...
    kind: str  # CONFORMANCE or FEATURE
    run: CheckFn
    kep: str = ""  # "KEP-4381"
    gates: tuple[str, ...] = ()  # every one must be on, or the check skips
    serial: bool = False  # changes something cluster-wide; never runs beside another check
    timeout: float = 60.0  # seconds for the whole check, cleanup excluded
    module: str = ""

    @property
    def tags(self) -> str:
        """`[KEP-4381] [FeatureGate:DRAPrioritizedList]`, as the report prints beside the name."""
        parts = [f"[{self.kep}]"] if self.kep else []
        parts += [f"[FeatureGate:{gate}]" for gate in self.gates]
        return " ".join(parts)


_CHECKS: dict[str, Check] = {}


def _register(check: Check) -> None:
    if check.name in _CHECKS:
        raise ValueError(f"two checks are named {check.name!r} ({_CHECKS[check.name].module} and {check.module})")
    _CHECKS[check.name] = check


def conformance(codename: str, *, area: str, serial: bool = False,
                timeout: float = 60.0) -> Callable[[CheckFn], CheckFn]:
    """Register a check of the upstream conformance test `codename` (its name in conformance.yaml)."""
    if not codename.endswith("[Conformance]"):
        raise ValueError(f"an upstream conformance codename ends with [Conformance]: {codename!r}")

    def register(fn: CheckFn) -> CheckFn:
        _register(Check(codename, area, CONFORMANCE, fn, serial=serial, timeout=timeout, module=fn.__module__))
        return fn
    return register


def feature(name: str, *, area: str, kep: str, gates: tuple[str, ...] = (), serial: bool = False,
            timeout: float = 60.0) -> Callable[[CheckFn], CheckFn]:
    """Register a 1.36 feature check; `name` should start with `[Feature:<Gate or feature>]`."""
    if not kep.startswith("KEP-"):
        raise ValueError(f"a feature check names its KEP as KEP-<number>: {kep!r}")

    def register(fn: CheckFn) -> CheckFn:
        _register(Check(name, area, FEATURE, fn, kep=kep, gates=tuple(gates), serial=serial, timeout=timeout,
                        module=fn.__module__))
        return fn
    return register


def all_checks() -> list[Check]:
    """Every registered check, after importing each module of `conformance.checks`, sorted by area then name."""
    from conformance import checks

    for info in pkgutil.iter_modules(checks.__path__):
        importlib.import_module(f"{checks.__name__}.{info.name}")
    return sorted(_CHECKS.values(), key=lambda c: (c.area, c.name))
