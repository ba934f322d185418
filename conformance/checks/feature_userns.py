"""User namespaces (KEP-127, `pod.spec.hostUsers: false`, GA in 1.36): what the API server refuses,
and the ID mapping the node gives a pod, read from /proc/self/uid_map through exec."""

from __future__ import annotations

from conformance.checks import _conffeatures_support as s
from conformance.context import Context
from conformance.registry import feature

AREA = "node"
KEP = "KEP-127"
GATES = ("UserNamespacesSupport",)
BUSYBOX = "busybox:1.36"
HOST_MAP = (0, 0, 4294967295)


async def userns_pod(ctx: Context, *, host_users: bool | None = False, node: str = "") -> str:
    spec: dict[str, object] = {}
    if host_users is not None:
        spec["hostUsers"] = host_users
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    # The checks exec `cat`, so the pods need an image that has it.
    created = await s.pod(ctx, spec=spec, command=["sleep", "3600"], image=BUSYBOX)
    name = str(created["metadata"]["name"])
    await s.running(ctx, name)
    return name


async def id_map(ctx: Context, pod: str, which: str = "uid_map") -> tuple[int, int, int]:
    out, code = await s.exec_output(ctx, pod, ["cat", f"/proc/self/{which}"])
    assert code == 0, f"cat /proc/self/{which} exited {code}: {out!r}"
    lines = [line.split() for line in out.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and len(lines[0]) == 3, f"one mapping line expected in {which}: {out!r}"
    inside, outside, length = (int(x) for x in lines[0])
    return inside, outside, length


@feature("[Feature:UserNamespacesSupport] a hostUsers: false pod runs with container root mapped to a "
         "non-zero 65536-aligned host range", area=AREA, kep=KEP, gates=GATES)
async def pod_gets_own_range(ctx: Context) -> None:
    name = await userns_pod(ctx)
    inside, outside, length = await id_map(ctx, name)
    assert inside == 0 and outside > 0, f"container ID 0 must map to a non-root host ID: {(inside, outside, length)}"
    assert length >= 65536 and length % 65536 == 0 and outside % 65536 == 0, \
        f"the block is a multiple of 65536: {(inside, outside, length)}"
    assert await id_map(ctx, name, "gid_map") == (inside, outside, length), "gid_map should mirror uid_map"


@feature("[Feature:UserNamespacesSupport] two hostUsers: false pods on one node get disjoint ID ranges",
         area=AREA, kep=KEP, gates=GATES)
async def pods_get_disjoint_ranges(ctx: Context) -> None:
    node = await s.a_node(ctx)
    first, second = [await userns_pod(ctx, node=node) for _ in range(2)]
    _, a, la = await id_map(ctx, first)
    _, b, lb = await id_map(ctx, second)
    assert a + la <= b or b + lb <= a, f"the ranges overlap: [{a}, {a + la}) and [{b}, {b + lb})"


@feature("[Feature:UserNamespacesSupport] a pod without hostUsers: false shares the host user namespace",
         area=AREA, kep=KEP, gates=GATES)
async def host_users_default(ctx: Context) -> None:
    name = await userns_pod(ctx, host_users=None)
    assert await id_map(ctx, name) == HOST_MAP, "the host namespace maps every ID to itself"
    found = await s.get_pod(ctx, name)
    assert found["spec"].get("hostUsers") in (None, True), f"hostUsers became {found['spec'].get('hostUsers')}"


@feature("[Feature:UserNamespacesSupport] hostUsers: false is refused with hostPID or hostIPC",
         area=AREA, kep=KEP, gates=GATES)
async def host_namespaces_refused(ctx: Context) -> None:
    await s.default_account(ctx)  # else ServiceAccount admission refuses the pod before validation
    for field in ("hostPID", "hostIPC"):
        body = s.pod_body(ctx.name("pod"), spec={"hostUsers": False, field: True})
        err = await s.refused(ctx.create(body), 422, "Invalid")
        # Upstream spells these two paths spec.HostPID / spec.HostIPC.
        fields = [str(c.get("field", "")).lower() for c in err.details.get("causes") or []]
        assert f"spec.{field}".lower() in fields, f"the cause should name spec.{field}: {err.status}"


@feature("[Feature:UserNamespacesHostNetworkSupport] hostUsers: false is allowed with hostNetwork, and the pod "
         "still gets its own ID range", area=AREA, kep="KEP-5607", gates=GATES + ("UserNamespacesHostNetworkSupport",))
async def host_network_allowed(ctx: Context) -> None:
    created = await s.pod(ctx, spec={"hostUsers": False, "hostNetwork": True}, command=["sleep", "3600"],
                          image=BUSYBOX)
    name = created["metadata"]["name"]
    assert created["spec"].get("hostNetwork") is True and created["spec"].get("hostUsers") is False
    await s.running(ctx, name)
    inside, outside, _ = await id_map(ctx, name)
    assert inside == 0 and outside > 0, f"hostNetwork must not give the pod the host user namespace: {outside}"
