"""The registry: every in-tree plugin's upstream name mapped to its factory.

A factory is `new(args, handle, features) -> plugin` (`framework/interfaces.py`). The profile
builder (`scheduler/profiles.py`) looks names up here when it reads a KubeSchedulerConfiguration;
an unknown name there is a config error, as upstream's is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduler.framework.interfaces import Features, Handle
from scheduler.plugins import default_preemption, names

Factory = Callable[[dict[str, Any], Handle, Features], Any]

REGISTRY: dict[str, Factory] = {
    names.DEFAULT_PREEMPTION: default_preemption.new,
}
