"""Which feature gates are on in the cluster under test, as its API server reports them.

kube-apiserver (component-base) exposes one gauge per registered gate on `/metrics`:
`kubernetes_feature_enabled{name="X",stage="ALPHA|BETA|DEPRECATED|"} 0|1`. The runner reads it
once per run; a gated check whose gate reads 0 skips with the reason in the report. When the
metric cannot be read (`/metrics` forbidden, not served, or without that gauge) the gates are
unknown and assumed on, and `ClusterGates.source` says so for the report. Called by `runner`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from client import errors
from client.rest import RestClient

_GAUGE = re.compile(r'^kubernetes_feature_enabled\{([^}]*)\}\s+(\S+)', re.M)
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


@dataclass
class ClusterGates:
    values: dict[str, bool] = field(default_factory=dict)
    source: str = "not read: every gate assumed on"

    @property
    def known(self) -> bool:
        return bool(self.values)

    def off(self, needed: tuple[str, ...]) -> list[str]:
        """The gates of `needed` the cluster reports off; a gate it does not report is assumed on."""
        return [gate for gate in needed if self.values.get(gate) is False]


def parse(text: str) -> dict[str, bool]:
    """Gate → enabled, from Prometheus text that may hold `kubernetes_feature_enabled` lines."""
    found: dict[str, bool] = {}
    for labels, value in _GAUGE.findall(text):
        name = dict(_LABEL.findall(labels)).get("name")
        if name:
            found[name] = float(value) != 0
    return found


async def read(client: RestClient) -> ClusterGates:
    try:
        text = await client.request("GET", "/metrics", accept="text/plain")
    except errors.APIError as err:
        return ClusterGates(source=f"unknown (GET /metrics: {err.code} {err.reason or err.message}): "
                                   "every gate assumed on")
    values = parse(text if isinstance(text, str) else "")
    if not values:
        return ClusterGates(source="unknown (/metrics has no kubernetes_feature_enabled): every gate assumed on")
    return ClusterGates(values, f"read from /metrics ({sum(values.values())} of {len(values)} gates on)")
