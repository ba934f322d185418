"""The attach step of a NIC that binds late (KEP-5007), reported in the claim's `status.devices`.

A `nic.haru.dev` device carries `bindingConditions: [nic.haru.dev/attached]` and
`bindingFailureConditions: [nic.haru.dev/attach-failed]`, so the scheduler waits in PreBind until
the driver says how the attach went. `attach_status(claim, node_name, ...)` is that report: given an
allocated claim it returns the merge patch for `resourceclaims/status` (the whole `devices` list,
since a merge patch replaces lists), or None when every NIC of this node is already reported.
"""

from __future__ import annotations

import hashlib
from typing import Any

from nodes.devices.claims import results_of
from nodes.devices.health import now
from nodes.devices.names import NIC_ATTACH_FAILED, NIC_ATTACHED, NIC_DRIVER


def _mac(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    # 02: a locally administered unicast address, as virtual NICs use.
    return ":".join(f"{b:02x}" for b in (0x02, *digest[:5]))


def _address(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return f"10.{200 + digest[0] % 50}.{digest[1]}.{1 + digest[2] % 254}/16"


def _conditions(failed: bool, generation: int, at: str, device: str) -> list[dict[str, Any]]:
    attached = {"type": NIC_ATTACHED, "status": "False" if failed else "True", "observedGeneration": generation,
                "lastTransitionTime": at, "reason": "AttachFailed" if failed else "Attached",
                "message": f"{device} could not be attached" if failed else f"{device} is attached to the pod network"}
    failure = {"type": NIC_ATTACH_FAILED, "status": "True" if failed else "False", "observedGeneration": generation,
               "lastTransitionTime": at, "reason": "AttachFailed" if failed else "Attached", "message": ""}
    return [attached, failure]


def attach_status(claim: dict[str, Any], node_name: str, *, fail: bool = False,
                  at: str | None = None) -> dict[str, Any] | None:
    mine = [r for r in results_of(claim) if r.get("driver") == NIC_DRIVER and r.get("pool") == node_name]
    if not mine:
        return None
    current = list((claim.get("status") or {}).get("devices") or [])

    def key(entry: dict[str, Any]) -> tuple[str, str, str, str]:
        return (entry.get("driver", ""), entry.get("pool", ""), entry.get("device", ""), entry.get("shareID", ""))

    reported = {key(e) for e in current if e.get("conditions")}
    stamp = at or now()
    generation = int((claim.get("metadata") or {}).get("generation") or 0)
    uid = (claim.get("metadata") or {}).get("uid", "")
    changed = False
    for result in mine:
        entry: dict[str, Any] = {"driver": NIC_DRIVER, "pool": node_name, "device": result["device"]}
        if result.get("shareID"):
            entry["shareID"] = result["shareID"]
        if key(entry) in reported:
            continue
        entry["conditions"] = _conditions(fail, generation, stamp, result["device"])
        if not fail:
            seed = f"{uid}/{node_name}/{result['device']}"
            entry["networkData"] = {"interfaceName": f"net{mine.index(result) + 1}", "ips": [_address(seed)],
                                    "hardwareAddress": _mac(seed)}
        current = [e for e in current if key(e) != key(entry)] + [entry]
        changed = True
    if not changed:
        return None
    return {"status": {"devices": current}}
