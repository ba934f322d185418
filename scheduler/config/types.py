"""What the scheduler reads from its configuration, after defaults: profiles and their plugins.

`SchedulerConfig` is a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) reduced to
what haru acts on. Each `Profile` lists, per extension point (upstream's field names, such as
"filter" and "score"), the plugins in the order they run, with score weights, and each plugin's
args with upstream's defaults applied. `scheduler/runtime.py` builds one framework per profile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The extension points as KubeSchedulerConfiguration's `plugins` names them, in the order a pod meets them.
POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
          "reserve", "permit", "preBind", "bind", "postBind",
          "placementGenerate", "placementScore")  # the PodGroup cycle's (KEP-5732)


@dataclass(frozen=True)
class PluginRef:
    name: str
    weight: int = 0  # only score plugins have one; 0 elsewhere


@dataclass
class Profile:
    scheduler_name: str
    points: dict[str, list[PluginRef]] = field(default_factory=dict)  # keys from POINTS
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)  # plugin name -> args, defaulted
    percentage_of_nodes_to_score: int | None = None  # None: the top-level value

    def plugins(self, point: str) -> list[PluginRef]:
        return self.points.get(point, [])

    def names(self) -> list[str]:
        """Every plugin this profile uses, each once, in first-use order."""
        seen: dict[str, None] = {}
        for point in POINTS:
            for ref in self.points.get(point, []):
                seen.setdefault(ref.name, None)
        return list(seen)


@dataclass
class SchedulerConfig:
    profiles: list[Profile]
    percentage_of_nodes_to_score: int = 0  # 0: adaptive, as upstream (50% at 100 nodes, down to 5%)
    parallelism: int = 16
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0

    def profile(self, scheduler_name: str) -> Profile | None:
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)
