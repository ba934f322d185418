"""Simulated containers: what a container does (`behaviour.py` over `behaviours.yaml`), what it
leaves behind (`records.py`: state, log lines, env, user-namespace mapping), and the read-only
`view.py` the kubelet HTTP endpoint (`nodes/server.py`) serves exec, attach and logs from.
"""
