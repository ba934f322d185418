"""haru's hollow nodes: the `nodes` co-process (`python -m nodes`), an ordinary API client.

`pools` and `cluster_file` say what the cluster looks like; `kubelet/` registers each Node, renews
its Lease and runs the pods bound to it; `runtime/` holds the simulated containers (behaviour as
data, their log lines and env); `userns` hands out user-namespace ID blocks; `host` runs N kubelets
over one client; `server` serves the kubelet API (exec, attach, logs, port-forward) through
`kubelet/served_view`; `devices/` is the virtual GPU DRA driver and `shell.py` the shell exec reaches.
It imports only `client` (ARCHITECTURE.md "Hollow nodes"; `.importlinter`).
"""
