"""component-base's `--feature-gates` flag for the co-processes: one gate table, parsed and filtered.

The scheduler and the controllers may not import the API server's gate table (`.importlinter`),
so each keeps the gates it reads (`scheduler/features.py`, `controllers/features.py`) in a
`GateTable`; this module owns the flag's syntax and error texts, the AllAlpha/AllBeta switches,
locked gates, and `select`, which keeps the part of `haru up`'s cluster-wide flag a component has.
As everywhere in haru (ARCHITECTURE principle 6), alpha and beta gates default to on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

ALPHA, BETA, GA = "alpha", "beta", "ga"
SWITCHES = {"AllAlpha": ALPHA, "AllBeta": BETA}
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


@dataclass(frozen=True)
class GateTable:
    """name -> (1.36 stage, upstream default); `locked` gates refuse the other value."""

    gates: Mapping[str, tuple[str, bool]]
    locked: frozenset[str] = field(default_factory=frozenset)

    def defaults(self) -> dict[str, bool]:
        return {name: (True if stage in (ALPHA, BETA) else default) for name, (stage, default) in self.gates.items()}

    def parse(self, text: str) -> dict[str, bool]:
        """The gate values for a `--feature-gates` value, or ValueError with component-base's text."""
        values = self.defaults()
        for item in text.split(","):
            if not item.strip():
                continue
            key, sep, raw = item.partition("=")
            key, raw = key.strip(), raw.strip()
            if not sep:
                raise ValueError(f"missing bool value for {key}")
            if raw in _TRUE:
                value = True
            elif raw in _FALSE:
                value = False
            else:
                raise ValueError(f'invalid value of {key}={raw}, err: strconv.ParseBool: parsing "{raw}": '
                                 f'invalid syntax')
            if key in SWITCHES:
                values.update({name: value for name, (stage, _) in self.gates.items() if stage == SWITCHES[key]})
                continue
            spec = self.gates.get(key)
            if spec is None:
                raise ValueError(f"unrecognized feature gate: {key}")
            if key in self.locked and value != spec[1]:
                raise ValueError(f"cannot set feature gate {key} to {'true' if value else 'false'}, "
                                 f"feature is locked to {'true' if spec[1] else 'false'}")
            values[key] = value
        return values

    def select(self, text: str) -> str:
        """The part of a cluster-wide `--feature-gates` value that names this table's gates: `haru up`
        takes one flag for every component, and the API server's own gates are not ours to refuse."""
        return ",".join(item.strip() for item in text.split(",")
                        if item.partition("=")[0].strip() in (*self.gates, *SWITCHES))
