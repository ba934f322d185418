"""The flags that describe a hollow cluster's shape, shared by `haru up` and `python -m nodes`.

`add_shape_flags(parser)` adds `-f/--cluster-file`, `--nodes`, `--gpus-per-node`, `--gpu-model` and
`--grace-period-scale`; `shape_from_args(args)` turns them into `pools.NodeShape`s and the grace
scale, raising ValueError (a `cluster_file.ClusterFileError` names the line and field). Kept apart
from the kubelets so `haru up` can check its flags without importing them.
"""

from __future__ import annotations

import argparse

from nodes import cluster_file, pools

DEFAULT_GRACE_SCALE = 0.01  # kubelet/pod_worker.Settings.grace_scale: 30 s of grace take 0.3 s


def add_shape_flags(p: argparse.ArgumentParser) -> None:
    """The flags `haru up` shares with `python -m nodes`."""
    p.add_argument("-f", "--cluster-file", default=None, help="node pools from a cluster file")
    p.add_argument("--nodes", type=int, default=4, help="how many nodes (without -f)")
    p.add_argument("--gpus-per-node", type=int, default=8, help="GPUs on each GPU node (without -f)")
    p.add_argument("--gpu-model", default="h100", choices=(*pools.GPU_MODELS, "none"), help="the GPU model (without -f)")
    p.add_argument("--grace-period-scale", type=float, default=None,
                   help="pod grace periods are multiplied by this (default 0.01, or the cluster file's)")


def shape_from_args(args: argparse.Namespace) -> tuple[list[pools.NodeShape], float]:
    """The nodes and the grace scale the flags describe; raises ValueError with the reason."""
    scale = DEFAULT_GRACE_SCALE
    if args.cluster_file:
        parsed = cluster_file.load(args.cluster_file)
        shapes = pools.expand(parsed.pools)
        if parsed.grace_period_scale is not None:
            scale = parsed.grace_period_scale
    else:
        shapes = pools.expand(pools.default_pools(args.nodes, args.gpus_per_node, args.gpu_model))
    if args.grace_period_scale is not None:
        scale = args.grace_period_scale
    return shapes, scale
