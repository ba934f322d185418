"""One hollow kubelet: `kubelet.Kubelet` registers its Node (`node_object.py`), heartbeats its
Lease (`lease.py`), admits the pods bound to it (`admission.py`, over `resources.py`) and runs
each in a `pod_worker.PodWorker`, whose status `pod_status.py` renders in the kubelet's shape.
"""
