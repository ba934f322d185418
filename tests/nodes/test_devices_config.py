"""The `devices` mapping of the cluster file: what it means, and the (path, message) it refuses with."""

from __future__ import annotations

from typing import Any

import pytest

from nodes.devices import config, inventory, presets


def errors_of(raw: Any) -> list[tuple[tuple[str | int, ...], str]]:
    with pytest.raises(config.DevicesConfigError) as caught:
        config.parse(raw)
    return caught.value.errors


def test_an_absent_mapping_means_no_devices() -> None:
    assert config.parse(None).empty


def test_the_flags_give_gpus_of_the_named_model_with_nvlink_on_hgx_boards() -> None:
    cfg = config.from_flags(8, "h200")
    assert cfg.gpus == 8 and cfg.model is presets.MODELS["h200"] and cfg.nvlink and cfg.numa_nodes == 2
    assert not config.from_flags(4, "l40s").nvlink
    assert config.from_flags(8, "none").gpus == 0
    assert config.flags_mapping(8, "h200") == {"gpus": 8, "model": "h200"}
    assert config.gpu_count({"gpus": 4, "model": "a100"}) == 4 and config.gpu_count({"gpu": {"count": 8}}) == 0


def test_a_full_mapping_is_read_with_its_overrides() -> None:
    cfg = config.parse({"gpus": 4, "model": "a100", "memory": "40Gi", "productName": "NVIDIA A100-SXM4-40GB",
                        "driverVersion": "570.133.20", "numaNodes": 1,
                        "mig": {"gpus": [2, 3], "profiles": ["7g.80gb", "1g.10gb"]},
                        "nvlink": {"clique": "e7b3a1f0-1c2d-4e5f-8a9b-0c1d2e3f4a5b.1"},
                        "sharedGpu": {"gpus": [0], "mode": "unlimited"}, "network": {"count": 2, "attach": "fail"}})
    assert cfg.model is not None and cfg.model.memory_mib == 40960 and cfg.model.product_name == "NVIDIA A100-SXM4-40GB"
    assert cfg.model.driver_version == "570.133.20" and cfg.model.cuda_driver_version == "12.9"
    assert cfg.mig_gpus == {2, 3} and cfg.mig_profiles == ("1g.10gb", "7g.80gb")  # the model's order
    assert cfg.clique.endswith(".1") and cfg.shared_gpus == {0} and cfg.share_mode == "unlimited"
    assert cfg.nics == 2 and cfg.nic_attach_fails and cfg.nic_attach_delay == 0
    assert config.parse({"network": {"count": 1, "attachDelaySeconds": 3}}).nic_attach_delay == 3


CASES = [
    ("a list instead of a mapping", ["gpus"], [((), "must be a mapping, not a list")]),
    ("an unknown field", {"gpu": 8},
     [(("gpu",), "unknown field; known fields: " + ", ".join(config.KEYS))]),
    ("an unknown model", {"gpus": 1, "model": "b300"},
     [(("model",), "unsupported value 'b300'; supported: h100, h200, a100, l40s, none")]),
    ("a count that is a string", {"gpus": "8"}, [(("gpus",), "must be an integer, not a string")]),
    ("too many GPUs", {"gpus": 17}, [(("gpus",), "must be between 0 and 16, not 17")]),
    ("GPUs of model none", {"gpus": 2, "model": "none"}, [(("gpus",), 'must be 0 when model is "none"')]),
    ("MIG on a GPU without it", {"gpus": 2, "model": "l40s", "mig": True},
     [(("mig",), "NVIDIA L40S does not support MIG")]),
    ("an unknown MIG profile, by index", {"gpus": 1, "mig": {"profiles": ["1g.10gb", "1g.5gb"]}},
     [(("mig", "profiles", 1), "unknown MIG profile '1g.5gb' for h100; known: "
       "1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb")]),
    ("a MIG GPU index out of range", {"gpus": 2, "mig": {"gpus": [0, 2]}},
     [(("mig", "gpus", 1), "must be a GPU index between 0 and 1, not 2")]),
    ("a bad memory quantity", {"gpus": 1, "memory": "80GB"},
     [(("memory",), "must be a byte quantity such as 80Gi or 85899345920, not '80GB'")]),
    ("a bad driver version", {"gpus": 1, "driverVersion": "r570"},
     [(("driverVersion",), "must be a dotted version such as \"570.133.20\", not 'r570'")]),
    ("NVLink on a PCIe card", {"gpus": 2, "model": "l40s", "nvlink": True},
     [(("nvlink",), "NVIDIA L40S has no NVLink switch fabric")]),
    ("an NVSwitch domain of three GPUs", {"gpus": 3, "nvlink": True},
     [(("nvlink",), "an NVSwitch domain holds 2, 4, 8 or 16 GPUs, not 3")]),
    ("a malformed clique", {"gpus": 8, "nvlink": {"clique": "one"}},
     [(("nvlink", "clique"), "must be \"<clusterUUID>.<cliqueID>\", not 'one'")]),
    ("a shared GPU on a CPU node", {"sharedGpu": True}, [(("sharedGpu",), "the node has no GPUs to share")]),
    ("a bad share mode", {"gpus": 1, "sharedGpu": {"mode": "half"}},
     [(("sharedGpu", "mode"), "must be memory, unlimited or a share count, not 'half'")]),
    ("a bad attach outcome", {"network": {"count": 1, "attach": "maybe"}},
     [(("network", "attach"), "must be succeed or fail, not 'maybe'")]),
    ("an attach delay past the scheduler's binding timeout", {"network": {"count": 1, "attachDelaySeconds": 601}},
     [(("network", "attachDelaySeconds"), "must be between 0 and 600, not 601")]),
    ("every error at once, in field order", {"gpus": -1, "model": "x", "network": "two"},
     [(("model",), "unsupported value 'x'; supported: h100, h200, a100, l40s, none"),
      (("gpus",), "must be between 0 and 16, not -1"),
      (("network",), "must be a count or a mapping with count and attach, not a string")]),
]


@pytest.mark.parametrize(("raw", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_malformed_mapping_is_refused_with_the_path_and_message(raw: Any, want: list[Any]) -> None:
    assert errors_of(raw) == want


def test_paths_format_as_the_cluster_file_spells_them() -> None:
    assert config.format_path(("mig", "profiles", 1)) == "devices.mig.profiles[1]"
    err = config.DevicesConfigError([(("gpus",), "must be an integer, not a string")])
    assert str(err) == "devices.gpus: must be an integer, not a string"


def test_a_multi_node_nvlink_clique_becomes_the_nvidia_node_label() -> None:
    cfg = config.parse({"gpus": 4, "model": "h100", "nvlink": {"clique": "e7b3a1f0-1c2d-4e5f-8a9b-0c1d2e3f4a5b.3"}})
    assert inventory.node_labels(cfg) == {"nvidia.com/gpu.clique": "e7b3a1f0-1c2d-4e5f-8a9b-0c1d2e3f4a5b.3"}
    assert inventory.node_labels(config.parse({"gpus": 4})) == {}
