"""The DynamicResources plugin (DRA): a pod's ResourceClaims allocated from ResourceSlices.

- `plugin`: the extension points (PreEnqueue … PreBind) and the queueing hints;
- `pod_claims`: which claims a pod uses and whether it may, with upstream's messages;
- `extended`: extended resources served by a DeviceClass (KEP-5004);
- `binding_conditions`: devices that bind late (KEP-5007);
- `claim_tracker`: in-flight and just-written claims; `inventory_sync`: slices into the allocator;
- `claim_writes`: what it writes to the API server (status, the special claim, deletes);
- `node_selector`: an allocation's node selector against a node.
The allocator itself is `scheduler/dra`; `new` is the registry's factory.
"""

from __future__ import annotations

from typing import Any

from scheduler.framework.interfaces import Features, Handle
from scheduler.plugins.dynamic_resources import binding_conditions
from scheduler.plugins.dynamic_resources.plugin import DynamicResources


def new(args: dict[str, Any], handle: Handle, features: Features) -> DynamicResources:
    timeout = binding_conditions.parse_duration((args or {}).get("bindingTimeout"), binding_conditions.DEFAULT_TIMEOUT)
    return DynamicResources(handle, features, binding_timeout=timeout)


__all__ = ["DynamicResources", "new"]
