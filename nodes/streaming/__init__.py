"""The kubelet's streaming protocols: the WebSocket channel framing (`channels`), exec and attach
(`remotecommand`), container logs (`logs`) and port forwarding (`portforward`). Served by
`nodes/server.py`.
"""
