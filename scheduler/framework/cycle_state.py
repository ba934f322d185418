"""`CycleState`: what the plugins of one scheduling attempt share, upstream's CycleState.

A plugin writes its PreFilter or PreScore result under its own key and reads it back in Filter or
Score. The framework clones it when preemption simulates removing victims, so state values that
change under AddPod/RemovePod implement `clone()`; others are shared. It also records which
plugins answered Skip, so their Filter or Score is not called for this pod.
"""

from __future__ import annotations

from typing import Any


class CycleState:
    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()
        self.record_plugin_metrics = False

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value under `key`; a missing key is a bug in the plugin order, so it raises."""
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(f"{key!r} not found in the cycle state") from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> "CycleState":
        copy = CycleState()
        copy._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        copy.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        copy.record_plugin_metrics = self.record_plugin_metrics
        return copy
