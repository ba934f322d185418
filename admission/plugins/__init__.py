"""The built-in admission plugins haru runs besides the policies: LimitRanger, ServiceAccount,
Priority, ResourceQuota.

NamespaceLifecycle and DefaultTolerationSeconds are not here: the API server does the first itself
before the chain runs (`apiserver/writing.py`), the second is a pod default in the pod strategy
(`apiserver/kinds/pod_admission.py`, which also defaults serviceAccountName when the optional
ServiceAccount plugin is off). `admission/assembly.py` orders them.
"""
