"""The ReplicationController controller: the ReplicaSet controller driving core/v1 ReplicationControllers.

Upstream's pkg/controller/replication is the ReplicaSet controller behind an adapter; so is this:
the same reconcile (`replica_set.ReplicaSetController`) with the resource, kind and event
component of an RC, its selector read as the plain label map it is, and no terminatingReplicas
in the status (ReplicationControllerStatus has none). The condition is ReplicaFailure for both.
Registered by `builtin.py`; `kubectl scale rc` goes through the scale subresource to spec.replicas.
"""

from __future__ import annotations

from typing import Any

from client.resources import REPLICATIONCONTROLLERS
from controllers.replica_set import ReplicaSetController

COMPONENT = "replication-controller"


class ReplicationControllerController(ReplicaSetController):
    name = "replicationcontroller"
    resource = REPLICATIONCONTROLLERS
    kind = "ReplicationController"
    api_version = "v1"
    component = COMPONENT
    counts_terminating = False

    @staticmethod
    def selector_of(rc: dict[str, Any]) -> dict[str, Any] | None:
        selector = (rc.get("spec") or {}).get("selector")
        return None if selector is None else {"matchLabels": selector}
