"""The pytest plugin `pip install haru` registers (entry point `pytest11`): an embedded cluster per test.

`haru_cluster` starts a whole cluster in-process (`cluster/embedded.py`: API server, controllers,
scheduler, hollow nodes) in a temporary directory on 127.0.0.1, and yields a `HaruCluster` with
`kubeconfig` (a path), `endpoint` (the https URL) and `api_client` (a `kubernetes.client.ApiClient`).
*Ready* means: every Node is Ready and the `default` ServiceAccount of `default` exists. Options
come from `@pytest.mark.haru_cluster(nodes=3, feature_gates="...", crd_dirs=["config/crd"])` or
from indirect parametrization (`@pytest.mark.parametrize("haru_cluster", [{"nodes": 2}], indirect=True)`).
`haru_cluster_module` and `haru_cluster_session` share one cluster per module or per session
(options from the module's `pytestmark` / defaults). Each stops everything at teardown. Under
pytest-xdist every worker starts its own clusters (own temporary directory, own port).
Only this module imports pytest; the rest of haru does not need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import pytest

from cluster.embedded import EmbeddedCluster, Options

MARKER = "haru_cluster"


@dataclass
class HaruCluster:
    """What the fixture yields. `api_client` is closed at teardown; make more from `kubeconfig`."""

    kubeconfig: str
    endpoint: str
    api_client: Any  # kubernetes.client.ApiClient
    embedded: EmbeddedCluster

    @property
    def node_names(self) -> list[str]:
        return self.embedded.node_names


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(nodes=1, gpus_per_node=0, feature_gates='', crd_dirs=()): "
                   "options of the haru_cluster fixture (an embedded haru cluster)")


def _options(node: Any, param: Any) -> Options:
    kwargs: dict[str, Any] = {}
    marker = node.get_closest_marker(MARKER) if node is not None else None
    if marker is not None:
        if marker.args:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keyword arguments only")
        kwargs.update(marker.kwargs)
    if isinstance(param, dict):
        kwargs.update(param)
    if "crd_dirs" in kwargs:
        kwargs["crd_dirs"] = tuple(str(d) for d in kwargs["crd_dirs"])
    if "controllers" in kwargs:
        kwargs["controllers"] = tuple(kwargs["controllers"])
    try:
        return Options(**kwargs)
    except TypeError as exc:
        raise pytest.UsageError(f"{MARKER} options: {exc}") from None


def _api_client(path: str) -> Any:
    from kubernetes import client, config  # the operator's own dependency, imported when used

    configuration = client.Configuration()
    config.load_kube_config(config_file=path, client_configuration=configuration)
    return client.ApiClient(configuration)


def _run(data_dir: str, options: Options) -> Iterator[HaruCluster]:
    embedded = EmbeddedCluster.start(data_dir, options)
    api_client = None
    try:
        api_client = _api_client(embedded.kubeconfig)
        yield HaruCluster(embedded.kubeconfig, embedded.url, api_client, embedded)
    finally:
        if api_client is not None:
            api_client.close()
        embedded.stop()


@pytest.fixture
def haru_cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HaruCluster]:
    """An embedded haru cluster for this test (options: the `haru_cluster` marker or indirect params)."""
    options = _options(request.node, getattr(request, "param", None))
    yield from _run(str(tmp_path_factory.mktemp("haru-cluster")), options)


@pytest.fixture(scope="module")
def haru_cluster_module(request: pytest.FixtureRequest,
                        tmp_path_factory: pytest.TempPathFactory) -> Iterator[HaruCluster]:
    """One embedded cluster for every test of the module (options: the module's `haru_cluster` marker)."""
    options = _options(request.node, getattr(request, "param", None))
    yield from _run(str(tmp_path_factory.mktemp("haru-cluster-module")), options)


@pytest.fixture(scope="session")
def haru_cluster_session(request: pytest.FixtureRequest,
                         tmp_path_factory: pytest.TempPathFactory) -> Iterator[HaruCluster]:
    """One embedded cluster for the whole session (default options, or indirect params)."""
    options = _options(None, getattr(request, "param", None))
    yield from _run(str(tmp_path_factory.mktemp("haru-cluster-session")), options)
