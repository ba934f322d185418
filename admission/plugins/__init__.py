"""The built-in admission plugins haru runs besides the policies: LimitRanger, Priority, ResourceQuota.

NamespaceLifecycle, ServiceAccount and DefaultTolerationSeconds are not here: the API server does
the first itself before the chain runs (`apiserver/writing.py`), the other two are pod defaults
in the pod strategy (`apiserver/kinds/pod_admission.py`). `admission/assembly.py` orders them.
"""
