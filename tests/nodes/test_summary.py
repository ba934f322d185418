"""cluster/summary.py: the one-screen summary `haru up` prints once the nodes are Ready."""

from __future__ import annotations

from apiserver.features import FeatureGates
from cluster import summary
from nodes import pools


def test_the_summary_names_endpoint_kubeconfig_pools_gpus_and_differing_gates() -> None:
    text = summary.render(url="https://127.0.0.1:6443", kubeconfig="/k", shapes=pools.expand(pools.default_pools()),
                          gates=FeatureGates.parse("GangScheduling=false"), seconds=0.8)
    lines = text.splitlines()
    assert lines[0] == "haru is ready in 0.8s: Kubernetes v1.36 on 4 hollow nodes"
    assert "https://127.0.0.1:6443" in lines[1] and "/k" in lines[2]
    assert any(line.split()[:3] == ["gpu", "2", "×"] and "8× H100" in line and "gpu-0 gpu-1" in line for line in lines)
    assert any(line.split()[:3] == ["cpu", "2", "×"] and "no GPUs" in line for line in lines)
    assert any("16× NVIDIA H100" in line for line in lines)
    gates = " ".join(lines[lines.index(next(l for l in lines if "gates on here" in l)):])
    assert "ShardedListAndWatch" in gates and "GangScheduling" not in gates
    assert len(lines) <= 24  # one screen


def test_no_nodes_says_pods_stay_pending() -> None:
    text = summary.render(url="u", kubeconfig="k", shapes=[], gates=FeatureGates(), seconds=0.1)
    assert "none (pods stay Pending)" in text


def test_the_schedulers_metrics_endpoint_is_listed_when_it_has_one() -> None:
    text = summary.render(url="u", kubeconfig="k", shapes=[], gates=FeatureGates(), seconds=0.1,
                          scheduler_url="http://127.0.0.1:41234")
    assert "  scheduler   http://127.0.0.1:41234/metrics, http://127.0.0.1:41234/healthz" in text.splitlines()
    assert "scheduler   " not in summary.render(url="u", kubeconfig="k", shapes=[], gates=FeatureGates(), seconds=0.1)
