"""The nodes co-process: hollow kubelets that register Nodes, run the pods bound to them, and
serve the kubelet API (`server.py`). It reaches the cluster only through `client/`.
"""
