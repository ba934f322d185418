"""`/healthz`, `/livez`, `/readyz`: named checks, verbose output, exclusions, single checks, failures."""

from __future__ import annotations

_LIVEZ = ["[+]ping ok", "[+]etcd ok", "[+]poststarthook/start-apiextensions-controllers ok",
          "[+]poststarthook/bootstrap-controller ok"]


async def test_plain_ok_and_the_verbose_list(api):
    status, body, headers = await api.request("GET", "/livez")
    assert (status, body) == (200, "ok")
    assert headers["Content-Type"] == "text/plain; charset=utf-8" and headers["X-Content-Type-Options"] == "nosniff"
    status, body, _ = await api.request("GET", "/livez?verbose")
    assert status == 200 and body.splitlines() == [*_LIVEZ, "livez check passed"]
    status, body, _ = await api.request("GET", "/healthz?verbose=1")
    assert body.splitlines() == [*_LIVEZ, "healthz check passed"]
    # readyz also asks whether the followers of the store (upstream's informers) are running.
    status, body, _ = await api.request("GET", "/readyz?verbose")
    assert status == 200 and body.splitlines() == [
        *_LIVEZ[:2], "[+]informer-sync ok", *_LIVEZ[2:], "readyz check passed"]


async def test_excluded_and_unknown_exclusions(api):
    status, body, _ = await api.request("GET", "/readyz?verbose&exclude=etcd&exclude=log&exclude=informer-sync")
    assert status == 200
    lines = body.splitlines()
    assert "[+]etcd excluded: ok" in lines and "[+]informer-sync excluded: ok" in lines
    assert lines[-2:] == ['warn: some health checks cannot be excluded: no matches for "log"', "readyz check passed"]


async def test_one_check_by_path(api):
    assert (await api.request("GET", "/livez/etcd"))[:2] == (200, "ok")
    assert (await api.request("GET", "/readyz/poststarthook/bootstrap-controller"))[:2] == (200, "ok")
    status, body, _ = await api.request("GET", "/livez/informer-sync")  # a readyz-only check
    assert status == 404 and body["reason"] == "NotFound"
    status, body, _ = await api.request("GET", "/livez/nope")
    assert status == 404


async def test_a_failing_check_fails_the_endpoint_without_saying_why(api):
    # Stop the CRD controller for real: CRD changes would no longer be served.
    await api.running.crds.stop()
    status, body, headers = await api.request("GET", "/livez")
    assert status == 500 and headers["Content-Type"] == "text/plain; charset=utf-8"
    assert body.splitlines() == [*_LIVEZ[:2], "[-]poststarthook/start-apiextensions-controllers failed: reason withheld",
                                 _LIVEZ[3], "livez check failed"]
    status, _, _ = await api.request("GET", "/readyz?exclude=poststarthook/start-apiextensions-controllers")
    assert status == 200
    status, body, _ = await api.request("GET", "/livez/poststarthook/start-apiextensions-controllers")
    assert (status, body) == (500, "internal server error: the CustomResourceDefinition controller stopped\n")


async def test_a_store_that_cannot_read_fails_etcd(api):
    await close_store(api)
    status, body, _ = await api.request("GET", "/readyz?verbose")
    assert status == 500 and "[-]etcd failed: reason withheld" in body.splitlines()
    status, body, _ = await api.request("GET", "/livez/etcd")
    assert status == 500 and body == "internal server error: StorageUnavailable: the store is closed\n"


async def close_store(api) -> None:
    """Close the store for real; its followers stop first, as they would fail on their next read."""
    await api.running.server.label_index.stop()
    await api.running.admission.stop()
    await api.running.crds.stop()
    await api.running.server.store.close()
