"""The `haru` command: starts and supervises the cluster's processes, writes kubeconfig and certificates."""
