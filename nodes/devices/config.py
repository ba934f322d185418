"""A node's `devices` mapping from the cluster file (or `--gpus-per-node`/`--gpu-model`), checked.

    devices:
      gpus: 8                # full GPUs on the node (default 0)
      model: h100            # h100 | h200 | a100 | l40s | none (presets.py; default h100)
      productName: "..."     # optional overrides of the preset: productName, memory ("80Gi" or
      memory: 80Gi           #   bytes), driverVersion, cudaDriverVersion ("570.133.20", "12.8")
      numaNodes: 2           # GPUs split evenly over this many NUMA nodes (default 2, 1 for one GPU)
      mig: true              # or {gpus: [0, 1] | all, profiles: [1g.10gb, 3g.40gb]}: dynamic MIG,
                             #   partitionable devices with shared counters (default: off)
      nvlink: true           # or {clique: "<clusterUUID>.<cliqueID>"}: NVSwitch domain attributes
                             #   (default: on for HGX models h100/h200/a100 with 2, 4, 8 or 16 GPUs)
      sharedGpu: true        # or {gpus: [...] | all, mode: memory | unlimited | <shares>}
      network: 2             # or {count: 2, attach: succeed | fail, attachDelaySeconds: 3}: NICs with an
                             #   attach step, answered that many seconds after allocation (default 0)

`parse(raw)` returns a `DevicesConfig` or raises `DevicesConfigError`, whose `.errors` are
`(path, message)` pairs; `path` is a tuple of keys and list indexes below `devices`, so the
cluster-file loader can find the line. `flags_mapping`/`from_flags` give what the `haru up` flags
mean, `gpu_count` what the summary counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from nodes.devices import presets

Path = tuple[str | int, ...]
Error = tuple[Path, str]

MAX_GPUS = 16  # the largest real boards (HGX B200 NVL16); slices hold ≤64 tainted devices anyway
MAX_NICS = 16
KEYS = ("gpus", "model", "productName", "memory", "driverVersion", "cudaDriverVersion", "numaNodes",
        "mig", "nvlink", "sharedGpu", "network")
_QUANTITY = re.compile(r"^([0-9]+)(Ki|Mi|Gi|Ti|k|M|G|T)?$")
_MULTIPLIERS = {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
                "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_VERSION = re.compile(r"^[0-9]+(\.[0-9]+){0,2}$")
_CLIQUE = re.compile(r"^[0-9a-fA-F-]{1,36}\.[0-9]{1,5}$")
SHARE_MODES = ("memory", "unlimited")


class DevicesConfigError(ValueError):
    def __init__(self, errors: list[Error]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{format_path(p)}: {m}" for p, m in errors))


def format_path(path: Path, root: str = "devices") -> str:
    out = root
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


@dataclass(frozen=True)
class DevicesConfig:
    model: presets.GpuModel | None = None
    gpus: int = 0
    numa_nodes: int = 1
    mig_gpus: frozenset[int] = frozenset()
    mig_profiles: tuple[str, ...] = ()
    nvlink: bool = False
    clique: str = ""
    shared_gpus: frozenset[int] = frozenset()
    share_mode: str = "memory"
    nics: int = 0
    nic_attach_fails: bool = False
    nic_attach_delay: int = 0  # seconds between seeing a NIC allocated and reporting the attach

    @property
    def empty(self) -> bool:
        return self.gpus == 0 and self.nics == 0


def flags_mapping(gpus: int, model: str = presets.DEFAULT) -> dict[str, Any]:
    """The `devices` mapping `--gpus-per-node G --gpu-model M` stands for (what a pool carries)."""
    return {"gpus": 0 if model == presets.NONE else gpus, "model": model}


def from_flags(gpus: int, model: str = presets.DEFAULT) -> DevicesConfig:
    """What `--gpus-per-node G --gpu-model M` means for one GPU node."""
    return parse(flags_mapping(gpus, model))


def gpu_count(raw: Any) -> int:
    """The full GPUs a `devices` mapping gives a node (0 when it is not a valid mapping)."""
    try:
        return parse(raw).gpus
    except DevicesConfigError:
        return 0


def parse(raw: Any) -> DevicesConfig:
    errors: list[Error] = []
    if raw is None:
        return DevicesConfig()
    if not isinstance(raw, dict):
        raise DevicesConfigError([((), f"must be a mapping, not {_kind(raw)}")])
    for key in raw:
        if key not in KEYS:
            errors.append(((str(key),), f"unknown field; known fields: {', '.join(KEYS)}"))

    model_name = raw.get("model", presets.DEFAULT)
    model: presets.GpuModel | None = None
    if model_name == presets.NONE:
        model = None
    elif isinstance(model_name, str) and model_name in presets.MODELS:
        model = presets.MODELS[model_name]
    else:
        errors.append((("model",), f"unsupported value {model_name!r}; supported: {', '.join(presets.CHOICES)}"))

    gpus = _int(raw, "gpus", 0, 0, MAX_GPUS, errors)
    if model is None and gpus and model_name == presets.NONE:
        errors.append((("gpus",), 'must be 0 when model is "none"'))
    if model is not None:
        model = _overridden(model, raw, errors)
    numa = _int(raw, "numaNodes", 2 if gpus > 1 else 1, 1, 8, errors)

    mig_gpus, mig_profiles = _mig(raw.get("mig"), model, gpus, errors)
    nvlink, clique = _nvlink(raw.get("nvlink", None), model, gpus, errors)
    shared_gpus, share_mode = _shared(raw.get("sharedGpu"), gpus, errors)
    nics, attach_fails, attach_delay = _network(raw.get("network"), errors)

    if errors:
        raise DevicesConfigError(errors)
    return DevicesConfig(model=model, gpus=gpus, numa_nodes=numa, mig_gpus=mig_gpus,
                         mig_profiles=mig_profiles, nvlink=nvlink, clique=clique, shared_gpus=shared_gpus,
                         share_mode=share_mode, nics=nics, nic_attach_fails=attach_fails,
                         nic_attach_delay=attach_delay)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "null" if value is None else type(value).__name__


def _int(raw: dict[str, Any], key: str, default: int, low: int, high: int, errors: list[Error],
         path: Path = ()) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        errors.append(((*path, key), f"must be an integer, not {_kind(value)}"))
        return default
    if not low <= value <= high:
        errors.append(((*path, key), f"must be between {low} and {high}, not {value}"))
        return default
    return value


def _overridden(model: presets.GpuModel, raw: dict[str, Any], errors: list[Error]) -> presets.GpuModel:
    changes: dict[str, Any] = {}
    name = raw.get("productName")
    if name is not None:
        if not isinstance(name, str) or not name or len(name) > 64:
            errors.append((("productName",), "must be a non-empty string of at most 64 characters"))
        else:
            changes["product_name"] = name
    memory = raw.get("memory")
    if memory is not None:
        size = _bytes(memory)
        if size is None or size < presets.MIB:
            errors.append((("memory",), f"must be a byte quantity such as 80Gi or 85899345920, not {memory!r}"))
        else:
            changes["memory_mib"] = size // presets.MIB
    for key, attr in (("driverVersion", "driver_version"), ("cudaDriverVersion", "cuda_driver_version")):
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not _VERSION.match(value):
            errors.append(((key,), f'must be a dotted version such as "570.133.20", not {value!r}'))
        else:
            changes[attr] = value
    return replace(model, **changes) if changes else model


def _bytes(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        match = _QUANTITY.match(value)
        if match:
            return int(match.group(1)) * _MULTIPLIERS[match.group(2)]
    return None


def _gpu_list(value: Any, gpus: int, path: Path, errors: list[Error]) -> frozenset[int]:
    if value is None or value == "all":
        return frozenset(range(gpus))
    if not isinstance(value, list):
        errors.append((path, f'must be "all" or a list of GPU indexes, not {_kind(value)}'))
        return frozenset()
    out: set[int] = set()
    for i, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < gpus:
            errors.append(((*path, i), f"must be a GPU index between 0 and {gpus - 1}, not {item!r}"
                           if gpus else "the node has no GPUs"))
        elif item in out:
            errors.append(((*path, i), f"duplicate GPU index {item}"))
        else:
            out.add(item)
    return frozenset(out)


def _mig(value: Any, model: presets.GpuModel | None, gpus: int,
         errors: list[Error]) -> tuple[frozenset[int], tuple[str, ...]]:
    if value is None or value is False:
        return frozenset(), ()
    if model is not None and not model.mig_capable:
        errors.append((("mig",), f"{model.product_name} does not support MIG"))
        return frozenset(), ()
    if model is None:
        errors.append((("mig",), "needs GPUs of a MIG-capable model"))
        return frozenset(), ()
    if value is True:
        value = {}
    if not isinstance(value, dict):
        errors.append((("mig",), f"must be true or a mapping with gpus and profiles, not {_kind(value)}"))
        return frozenset(), ()
    for key in value:
        if key not in ("gpus", "profiles"):
            errors.append((("mig", str(key)), "unknown field; known fields: gpus, profiles"))
    selected = _gpu_list(value.get("gpus"), gpus, ("mig", "gpus"), errors)
    names = value.get("profiles")
    known = [p.name for p in model.mig_profiles]
    if names is None:
        return selected, tuple(known)
    if not isinstance(names, list) or not names:
        errors.append((("mig", "profiles"), "must be a non-empty list of MIG profile names"))
        return selected, ()
    out: list[str] = []
    for i, name in enumerate(names):
        if name not in known:
            errors.append((("mig", "profiles", i),
                           f"unknown MIG profile {name!r} for {model.key}; known: {', '.join(known)}"))
        elif name not in out:
            out.append(name)
    # Keep the model's order (smallest first), as nvidia-smi lists them, whatever order the file used.
    return selected, tuple(n for n in known if n in out)


NVSWITCH_SIZES = (2, 4, 8, 16)  # the boards with an NVSwitch domain: HGX 4- and 8-GPU, NVL16


def _nvlink(value: Any, model: presets.GpuModel | None, gpus: int, errors: list[Error]) -> tuple[bool, str]:
    if value is None:
        return bool(model is not None and model.nvlink and gpus in NVSWITCH_SIZES), ""
    if value is False:
        return False, ""
    if model is not None and not model.nvlink:
        errors.append((("nvlink",), f"{model.product_name} has no NVLink switch fabric"))
        return False, ""
    if gpus not in NVSWITCH_SIZES:
        errors.append((("nvlink",), f"an NVSwitch domain holds 2, 4, 8 or 16 GPUs, not {gpus}"))
        return False, ""
    if value is True:
        return True, ""
    if not isinstance(value, dict):
        errors.append((("nvlink",), f"must be a boolean or a mapping with clique, not {_kind(value)}"))
        return False, ""
    for key in value:
        if key != "clique":
            errors.append((("nvlink", str(key)), "unknown field; known fields: clique"))
    clique = value.get("clique", "")
    if clique and (not isinstance(clique, str) or not _CLIQUE.match(clique)):
        errors.append((("nvlink", "clique"), f'must be "<clusterUUID>.<cliqueID>", not {clique!r}'))
        clique = ""
    return True, clique


def _shared(value: Any, gpus: int, errors: list[Error]) -> tuple[frozenset[int], str]:
    if value is None or value is False:
        return frozenset(), "memory"
    if value is True:
        value = {}
    if not isinstance(value, dict):
        errors.append((("sharedGpu",), f"must be true or a mapping with gpus and mode, not {_kind(value)}"))
        return frozenset(), "memory"
    for key in value:
        if key not in ("gpus", "mode"):
            errors.append((("sharedGpu", str(key)), "unknown field; known fields: gpus, mode"))
    if not gpus:
        errors.append((("sharedGpu",), "the node has no GPUs to share"))
    selected = _gpu_list(value.get("gpus"), gpus, ("sharedGpu", "gpus"), errors)
    mode = value.get("mode", "memory")
    if isinstance(mode, int) and not isinstance(mode, bool):
        if mode < 1:
            errors.append((("sharedGpu", "mode"), f"a share count must be positive, not {mode}"))
        mode = str(mode)
    elif mode not in SHARE_MODES:
        errors.append((("sharedGpu", "mode"), f"must be memory, unlimited or a share count, not {mode!r}"))
        mode = "memory"
    return selected, mode


def _network(value: Any, errors: list[Error]) -> tuple[int, bool, int]:
    if value is None or value is False:
        return 0, False, 0
    if isinstance(value, int) and not isinstance(value, bool):
        value = {"count": value}
    if not isinstance(value, dict):
        errors.append((("network",), f"must be a count or a mapping with count and attach, not {_kind(value)}"))
        return 0, False, 0
    for key in value:
        if key not in ("count", "attach", "attachDelaySeconds"):
            errors.append((("network", str(key)), "unknown field; known fields: count, attach, attachDelaySeconds"))
    count = _int(value, "count", 1, 0, MAX_NICS, errors, ("network",))
    attach = value.get("attach", "succeed")
    if attach not in ("succeed", "fail"):
        errors.append((("network", "attach"), f"must be succeed or fail, not {attach!r}"))
    # At most the scheduler's default binding timeout (600 s): longer would only ever time out.
    delay = _int(value, "attachDelaySeconds", 0, 0, 600, errors, ("network",))
    return count, attach == "fail", delay
