"""The parts of the hollow kubelet's HTTPS endpoint that are not streams: who may call it (`auth`),
its serving certificate (`cert`) and the read-only documents it serves (`info`). `nodes/server.py`
puts them together with `nodes/streaming/`.
"""
