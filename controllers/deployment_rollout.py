"""The Deployment strategies: RollingUpdate, Recreate, and the proportional scale between them.

`rolling`: grow the new ReplicaSet up to replicas + maxSurge, then shrink old ones (unhealthy
first) while at least replicas - maxUnavailable stay available (upstream's rolling.go).
`recreate`: scale every old ReplicaSet to 0, wait until none of their pods runs, then make the
new one at full size (recreate.go). `scale`: a replicas change in mid-rollout shared by size
(sync.go). Each ends in the controller's status sync. `controller` is the `DeploymentController`
(its writes: `scale_rs`, `get_all_replica_sets`, `cleanup`, `sync_rollout_status`).
"""

from __future__ import annotations

from typing import Any

from controllers import deployment_conditions as conditions, deployment_revisions as revisions, pod_states, rollout_math

Obj = dict[str, Any]
spec_replicas = rollout_math.spec_replicas


def by_creation(rs: Obj) -> tuple[float, str]:
    meta = rs.get("metadata") or {}
    return pod_states.parse_time(meta.get("creationTimestamp")) or 0.0, meta.get("name") or ""


def _available(rs: Obj | None) -> int:
    return int(((rs or {}).get("status") or {}).get("availableReplicas") or 0)


def _all(new_rs: Obj | None, old: list[Obj]) -> list[Obj]:
    return old + ([new_rs] if new_rs is not None else [])


async def rolling(controller: Any, d: Obj, rs_list: list[Obj]) -> Any:
    new_rs, old = await controller.get_all_replica_sets(d, rs_list, True)
    all_rs = _all(new_rs, old)
    if await _reconcile_new(controller, all_rs, new_rs, d):
        return await controller.sync_rollout_status(all_rs, new_rs, d)
    if await _reconcile_old(controller, all_rs, old, new_rs, d):
        return await controller.sync_rollout_status(all_rs, new_rs, d)
    if conditions.complete(d, d.get("status") or {}):
        await controller.cleanup(old, d)
    return await controller.sync_rollout_status(all_rs, new_rs, d)


async def _reconcile_new(controller: Any, all_rs: list[Obj], new_rs: Obj | None, d: Obj) -> bool:
    if new_rs is None:
        return False
    wanted = rollout_math.replicas(d)
    if spec_replicas(new_rs) == wanted:
        return False
    if spec_replicas(new_rs) > wanted:
        return bool(await controller.scale_and_record(new_rs, wanted, d))
    return bool(await controller.scale_and_record(new_rs, rollout_math.new_rs_replicas(d, all_rs, new_rs), d))


async def _reconcile_old(controller: Any, all_rs: list[Obj], old: list[Obj], new_rs: Obj | None, d: Obj) -> bool:
    if not sum(spec_replicas(rs) for rs in old):
        return False
    min_available = rollout_math.replicas(d) - rollout_math.max_unavailable(d)
    new_unavailable = spec_replicas(new_rs) - _available(new_rs)
    # Pods that are not available anyway (old unhealthy ones) may go beyond what availability allows.
    room = sum(spec_replicas(rs) for rs in all_rs) - min_available - new_unavailable
    if room <= 0:
        return False
    cleaned = await _cleanup_unhealthy(controller, old, d, room)
    scaled = await _scale_down_old(controller, all_rs, old, d)
    return cleaned + scaled > 0


async def _cleanup_unhealthy(controller: Any, old: list[Obj], d: Obj, limit: int) -> int:
    total = 0
    for rs in sorted(old, key=by_creation):
        if total >= limit:
            break
        unhealthy = spec_replicas(rs) - _available(rs)
        if not spec_replicas(rs) or unhealthy <= 0:
            continue
        count = min(limit - total, unhealthy)
        await controller.scale_and_record(rs, spec_replicas(rs) - count, d)
        total += count
    return total


async def _scale_down_old(controller: Any, all_rs: list[Obj], old: list[Obj], d: Obj) -> int:
    min_available = rollout_math.replicas(d) - rollout_math.max_unavailable(d)
    available = sum(_available(rs) for rs in all_rs)
    if available <= min_available:
        return 0
    goal, total = available - min_available, 0
    for rs in sorted(old, key=by_creation):
        if total >= goal:
            break
        if not spec_replicas(rs):
            continue
        count = min(spec_replicas(rs), goal - total)
        await controller.scale_and_record(rs, spec_replicas(rs) - count, d)
        total += count
    return total


def old_pods_running(new_rs: Obj | None, old: list[Obj], pods_by_rs: dict[str, list[Obj]]) -> bool:
    """Recreate's gate: an old ReplicaSet still counts pods, or one of its pods has not finished."""
    if sum(int((rs.get("status") or {}).get("replicas") or 0) for rs in old):
        return True
    new_uid = ((new_rs or {}).get("metadata") or {}).get("uid")
    for uid, pods in pods_by_rs.items():
        if uid == new_uid:
            continue
        if any((p.get("status") or {}).get("phase") not in ("Succeeded", "Failed") for p in pods):
            return True
    return False


async def recreate(controller: Any, d: Obj, rs_list: list[Obj], pods_by_rs: dict[str, list[Obj]]) -> Any:
    new_rs, old = await controller.get_all_replica_sets(d, rs_list, False)
    all_rs = _all(new_rs, old)
    scaled_down = False
    for rs in old:
        if spec_replicas(rs) and await controller.scale_and_record(rs, 0, d):
            scaled_down = True
    if scaled_down or old_pods_running(new_rs, old, pods_by_rs):
        return await controller.sync_rollout_status(all_rs, new_rs, d)
    if new_rs is None:
        new_rs, old = await controller.get_all_replica_sets(d, rs_list, True)
        all_rs = _all(new_rs, old)
    await controller.scale_and_record(new_rs, rollout_math.replicas(d), d)
    if conditions.complete(d, d.get("status") or {}):
        await controller.cleanup(old, d)
    return await controller.sync_rollout_status(all_rs, new_rs, d)


def _by_size(replica_sets: list[Obj], newer_first: bool) -> list[Obj]:
    """ReplicaSetsBySizeNewer / BySizeOlder: larger first, ties by creation."""
    ordered = sorted(replica_sets, key=by_creation, reverse=newer_first)
    return sorted(ordered, key=spec_replicas, reverse=True)


def active_or_latest(new_rs: Obj | None, old: list[Obj]) -> Obj | None:
    """FindActiveOrLatest: the one ReplicaSet with replicas, else the new (or largest old) one; None if several."""
    active = [rs for rs in _all(new_rs, old) if spec_replicas(rs)]
    if len(active) == 1:
        return active[0]
    if active:
        return None
    if new_rs is not None:
        return new_rs
    ordered = _by_size(old, newer_first=True)
    return ordered[0] if ordered else None


def saturated(d: Obj, rs: Obj | None) -> bool:
    if rs is None:
        return False
    wanted = rollout_math.replicas(d)
    return revisions.int_annotation(rs, revisions.DESIRED_REPLICAS) == wanted and spec_replicas(rs) == wanted \
        and _available(rs) == wanted


async def scale(controller: Any, d: Obj, new_rs: Obj | None, old: list[Obj]) -> None:
    wanted = rollout_math.replicas(d)
    only = active_or_latest(new_rs, old)
    if only is not None:
        if spec_replicas(only) != wanted:
            await controller.scale_and_record(only, wanted, d)
        return
    if saturated(d, new_rs):
        for rs in old:
            if spec_replicas(rs):
                await controller.scale_and_record(rs, 0, d)
        return
    if (((d.get("spec") or {}).get("strategy") or {}).get("type") or "RollingUpdate") != "RollingUpdate":
        return  # Recreate never runs two ReplicaSets at once for long: nothing to share
    active = [rs for rs in _all(new_rs, old) if spec_replicas(rs)]
    allowed = wanted + rollout_math.max_surge(d) if wanted > 0 else 0
    growing = allowed - sum(spec_replicas(rs) for rs in active) > 0
    active = _by_size(active, newer_first=growing)
    sizes = rollout_math.proportions(d, active, [revisions.int_annotation(rs, revisions.MAX_REPLICAS) for rs in active])
    for rs, size in zip(active, sizes):
        await controller.scale_rs(rs, size, d)
