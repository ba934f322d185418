"""The host's shared pod watch (`nodes.pod_feed`): every kubelet gets its own pods and only those.

Against an in-process API server: pods bound before and after the host starts run on the right
node with no per-kubelet informer. Then `_dispatch` on its own: routing by `spec.nodeName`, the
initial replay skipped, and a pod recreated under the same name on another node reaching the old
node as DELETED (an informer reports that as one MODIFIED after a relist).
"""

from __future__ import annotations

import asyncio
from typing import Any

from client.informer import Event
from client.kubeconfig import Config
from client.resources import PODS
from client.rest import RestClient
from nodes import host, pools
from nodes.kubelet.kubelet import NodeSettings
from nodes.kubelet.pod_worker import Settings
from nodes.pod_feed import PodFeed


def _pod(name: str, node: str, uid: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if uid:
        meta["uid"] = uid
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}}


async def _running_on(client: RestClient, name: str, timeout: float = 20.0) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        pod = await client.get(PODS, name, "default")
        if (pod.get("status") or {}).get("phase") == "Running":
            return pod
        assert loop.time() < deadline, f"pod {name} never ran: {pod.get('status')}"
        await asyncio.sleep(0.05)


async def test_kubelets_share_one_pod_watch_and_each_runs_only_its_pods(api, tmp_path) -> None:
    client = RestClient(Config.for_url(api.url))
    try:
        await client.create(PODS, _pod("early", "n-2"), "default")  # bound before the nodes start
        hosted = await host.start(client, pools.expand([pools.Pool("n", 3)]), state_dir=str(tmp_path / "state"),
                                  settings=NodeSettings(pods=Settings(grace_scale=0.01)))
        try:
            await client.create(PODS, _pod("late", "n-0"), "default")
            early, late = await _running_on(client, "early"), await _running_on(client, "late")
            assert early["status"]["hostIP"] and late["status"]["hostIP"]
            by_name = {k.name: k for k in hosted.kubelets}
            assert all(k.informer is None for k in hosted.kubelets)  # no watch of their own
            assert {w.pod["metadata"]["name"] for w in by_name["n-2"].workers.values()} == {"early"}
            assert {w.pod["metadata"]["name"] for w in by_name["n-0"].workers.values()} == {"late"}
            assert not by_name["n-1"].workers
        finally:
            await hosted.stop()
    finally:
        await client.close()


def test_dispatch_routes_by_node_and_tells_the_old_node_of_a_pod_recreated_elsewhere() -> None:
    feed = PodFeed(RestClient(Config.for_url("http://127.0.0.1:1")))
    seen: dict[str, list[tuple[str, str]]] = {"a": [], "b": []}
    for node in seen:
        feed.subscribe(node, lambda event, node=node: seen[node].append((event.type, event.obj["metadata"]["uid"])))

    feed._dispatch(Event("ADDED", _pod("p", "a", "u1"), initial=True))  # read through pods_on instead
    feed._dispatch(Event("ADDED", _pod("p", "a", "u1")))
    feed._dispatch(Event("ADDED", _pod("q", "elsewhere", "u9")))  # no kubelet of ours
    feed._dispatch(Event("MODIFIED", _pod("p", "b", "u2"), old=_pod("p", "a", "u1")))
    feed.unsubscribe("b")
    feed._dispatch(Event("DELETED", _pod("p", "b", "u2")))

    assert seen["a"] == [("ADDED", "u1"), ("DELETED", "u1")]
    assert seen["b"] == [("MODIFIED", "u2")]
