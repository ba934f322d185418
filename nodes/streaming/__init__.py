"""The kubelet's streaming protocols: the WebSocket channel framing (`channels`), exec and attach
(`remotecommand`), container logs (`logs`), and port forwarding: channel pairs (`portforward`) and
kubectl's SPDY tunnel (`portforward_spdy` over `spdy`). Served by `nodes/server.py`.
"""
