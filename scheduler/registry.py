"""The registry: every in-tree plugin's upstream name mapped to its factory.

A factory is `new(args, handle, features) -> plugin` (`framework/interfaces.py`). The profile
builder (`scheduler/profiles.py`) looks names up here when it reads a KubeSchedulerConfiguration;
an unknown name there is a config error, as upstream's is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scheduler.framework.interfaces import Features, Handle
from scheduler.plugins import default_binder
from scheduler.plugins import default_preemption
from scheduler.plugins import dynamic_resources
from scheduler.plugins import gang_scheduling
from scheduler.plugins import image_locality
from scheduler.plugins import inter_pod_affinity
from scheduler.plugins import names
from scheduler.plugins import node_affinity
from scheduler.plugins import node_name
from scheduler.plugins import node_ports
from scheduler.plugins import node_resources_balanced_allocation
from scheduler.plugins import node_resources_fit
from scheduler.plugins import node_unschedulable
from scheduler.plugins import pod_group_pods_count
from scheduler.plugins import pod_topology_spread
from scheduler.plugins import priority_sort
from scheduler.plugins import scheduling_gates
from scheduler.plugins import taint_toleration
from scheduler.plugins import topology_placement
from scheduler.plugins import volume_binding

Factory = Callable[[dict[str, Any], Handle, Features], Any]

REGISTRY: dict[str, Factory] = {
    names.DEFAULT_BINDER: default_binder.new,
    names.DEFAULT_PREEMPTION: default_preemption.new,
    names.DYNAMIC_RESOURCES: dynamic_resources.new,
    names.GANG_SCHEDULING: gang_scheduling.new,
    names.IMAGE_LOCALITY: image_locality.new,
    names.INTER_POD_AFFINITY: inter_pod_affinity.new,
    names.NODE_AFFINITY: node_affinity.new,
    names.NODE_NAME: node_name.new,
    names.NODE_PORTS: node_ports.new,
    names.NODE_RESOURCES_BALANCED_ALLOCATION: node_resources_balanced_allocation.new,
    names.NODE_RESOURCES_FIT: node_resources_fit.new,
    names.NODE_UNSCHEDULABLE: node_unschedulable.new,
    names.POD_GROUP_PODS_COUNT: pod_group_pods_count.new,
    names.POD_TOPOLOGY_SPREAD: pod_topology_spread.new,
    names.PRIORITY_SORT: priority_sort.new,
    names.SCHEDULING_GATES: scheduling_gates.new,
    names.TAINT_TOLERATION: taint_toleration.new,
    names.TOPOLOGY_PLACEMENT: topology_placement.new,
    names.VOLUME_BINDING: volume_binding.new,
}
