"""The registry: every in-tree plugin's upstream name mapped to its factory.

A factory is `new(args, handle, features) -> plugin` (`framework/interfaces.py`). The profile
builder (`scheduler/profiles.py`) looks names up here when it reads a KubeSchedulerConfiguration;
an unknown name there is a config error, as upstream's is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduler.framework.interfaces import Features, Handle
from scheduler.plugins import (image_locality, names, node_affinity, node_name, node_ports,
                               node_resources_balanced_allocation, node_resources_fit, node_unschedulable,
                               taint_toleration)

Factory = Callable[[dict[str, Any], Handle, Features], Any]

REGISTRY: dict[str, Factory] = {
    names.NODE_NAME: node_name.new,
    names.NODE_UNSCHEDULABLE: node_unschedulable.new,
    names.TAINT_TOLERATION: taint_toleration.new,
    names.NODE_AFFINITY: node_affinity.new,
    names.NODE_RESOURCES_FIT: node_resources_fit.new,
    names.NODE_RESOURCES_BALANCED_ALLOCATION: node_resources_balanced_allocation.new,
    names.NODE_PORTS: node_ports.new,
    names.IMAGE_LOCALITY: image_locality.new,
}
