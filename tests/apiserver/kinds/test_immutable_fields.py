"""Update rules of the 1.36 kinds: what an update may change, and upstream's words when it may not.

Each case creates an object through its strategy, edits a copy and runs the update hooks; the
causes are compared as `field: message` lines, the way a Status renders them.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from tests.apiserver.kinds.writes import created, edited, messages, strategy, update

Obj = dict[str, Any]

CLAIM = {"metadata": {"name": "rc1", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}
TEMPLATE = {"metadata": {"name": "t1", "namespace": "default"}, "spec": {"spec": CLAIM["spec"]}}
SLICE = {"metadata": {"name": "node-a-gpu"},
         "spec": {"driver": "gpu.example.com", "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
                  "nodeName": "node-a", "devices": [{"name": "gpu-0"}]}}
DEVICE_CLASS = {"metadata": {"name": "gpu.example.com"},
                "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
WORKLOAD = {"metadata": {"name": "train", "namespace": "default"},
            "spec": {"podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}}}]}}
POD_GROUP = {"metadata": {"name": "train-workers-0", "namespace": "default"},
             "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}},
                      "schedulingPolicy": {"gang": {"minCount": 4}}, "priorityClassName": "high"}}
ROLE_BINDING = {"metadata": {"name": "read", "namespace": "default"},
                "roleRef": {"kind": "Role", "name": "reader", "apiGroup": "rbac.authorization.k8s.io"},
                "subjects": [{"kind": "User", "name": "ann"}]}
STORAGE_CLASS = {"metadata": {"name": "fast"}, "provisioner": "csi.example.com", "parameters": {"tier": "gold"}}
VOLUME_ATTACHMENT = {"metadata": {"name": "va-1"},
                     "spec": {"attacher": "csi.example.com", "nodeName": "node-a", "source": {"persistentVolumeName": "pv-1"}}}
CSI_DRIVER = {"metadata": {"name": "csi.example.com"}, "spec": {}}
CAPACITY = {"metadata": {"name": "cap-1", "namespace": "default"}, "storageClassName": "fast", "capacity": "10Gi",
            "nodeTopology": {"matchLabels": {"zone": "a"}}}
ATTRIBUTES_CLASS = {"metadata": {"name": "gold"}, "driverName": "csi.example.com", "parameters": {"iops": "100"}}
INGRESS_CLASS = {"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx"}}
RUNTIME_CLASS = {"metadata": {"name": "gvisor"}, "handler": "runsc"}
ENDPOINT_SLICE = {"metadata": {"name": "web-abc", "namespace": "default"}, "addressType": "IPv4",
                  "endpoints": [{"addresses": ["10.0.0.1"]}]}
IP_ADDRESS = {"metadata": {"name": "10.96.0.10"},
              "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "default", "name": "dns"}}}
REVISION = {"metadata": {"name": "web-1", "namespace": "default"}, "data": {"spec": {"replicas": 1}}, "revision": 1}
QUOTA = {"metadata": {"name": "q", "namespace": "default"},
         "spec": {"hard": {"pods": "10"}, "scopes": ["NotTerminating", "NotBestEffort"]}}
VOLUME = {"metadata": {"name": "pv-1"},
          "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "nfs": {"server": "nfs", "path": "/a"},
                   "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                       {"key": "zone", "operator": "In", "values": ["a"]}]}]}}}}
PCR = {"metadata": {"name": "pcr-1", "namespace": "default"},
       "spec": {"signerName": "example.com/signer", "podName": "p", "podUID": "u1", "serviceAccountName": "sa",
                "serviceAccountUID": "u2", "nodeName": "node-a", "nodeUID": "u3", "pkixPublicKey": "AAAA",
                "proofOfPossession": "BBBB"}}
CANDIDATE = {"metadata": {"name": "c-1", "namespace": "kube-system"},
             "spec": {"leaseName": "scheduler", "binaryVersion": "1.36.0", "strategy": "OldestEmulationVersion"}}


def put(path: str, value: Any) -> Callable[[Obj], None]:
    """An edit that sets (or, for None, removes) one dotted path."""
    def edit(obj: Obj) -> None:
        *parents, leaf = path.split(".")
        for key in parents:
            obj = obj.setdefault(key, {})
        if value is None:
            obj.pop(leaf, None)
        else:
            obj[leaf] = value
    return edit


def both(*edits: Callable[[Obj], None]) -> Callable[[Obj], None]:
    def edit(obj: Obj) -> None:
        for one in edits:
            one(obj)
    return edit


LABELS = put("metadata.labels", {"team": "ml"})
NEW_CLASS_SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "other.example.com"}}]}}
IMMUTABLE_SPEC = 'spec: Invalid value: {"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"other.example.com"}}]}}: field is immutable'

# (group, resource, namespaced, has_status, object, edit, expected causes)
CASES = {
    "a claim's labels may change": ("resource.k8s.io", "resourceclaims", True, True, CLAIM, LABELS, []),
    "a claim's spec may not change": ("resource.k8s.io", "resourceclaims", True, True, CLAIM,
                                      put("spec", NEW_CLASS_SPEC), [IMMUTABLE_SPEC]),
    "a template's labels may change": ("resource.k8s.io", "resourceclaimtemplates", True, False, TEMPLATE, LABELS, []),
    "a template's spec may not change": (
        "resource.k8s.io", "resourceclaimtemplates", True, False, TEMPLATE, put("spec.metadata", {"labels": {"a": "b"}}),
        ['spec: Invalid value: {"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":'
         '"gpu.example.com"}}]}},"metadata":{"labels":{"a":"b"}}}: field is immutable']),
    "a slice's devices and pool generation may change": (
        "resource.k8s.io", "resourceslices", False, False, SLICE,
        both(put("spec.devices", [{"name": "gpu-1"}]), put("spec.pool.generation", 2)), []),
    "a slice's driver may not change": ("resource.k8s.io", "resourceslices", False, False, SLICE,
                                        put("spec.driver", "b.example.com"),
                                        ['spec.driver: Invalid value: "b.example.com": field is immutable']),
    "a slice's pool name may not change": ("resource.k8s.io", "resourceslices", False, False, SLICE,
                                           put("spec.pool.name", "node-b"),
                                           ['spec.pool.name: Invalid value: "node-b": field is immutable']),
    "a slice may not move from one node to all nodes": (
        "resource.k8s.io", "resourceslices", False, False, SLICE, both(put("spec.nodeName", None), put("spec.allNodes", True)),
        ["spec.nodeName: Invalid value: null: field is immutable"]),
    "a device class's selectors may change": ("resource.k8s.io", "deviceclasses", False, False, DEVICE_CLASS,
                                              put("spec.selectors", []), []),
    "a workload's labels may change": ("scheduling.k8s.io", "workloads", True, False, WORKLOAD, LABELS, []),
    "a workload's pod group templates may not change": (
        "scheduling.k8s.io", "workloads", True, False, WORKLOAD,
        put("spec.podGroupTemplates", [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 8}}}]),
        ["spec.podGroupTemplates: Invalid value: null: field is immutable"]),
    "a workload may not gain a controller reference": (
        "scheduling.k8s.io", "workloads", True, False, WORKLOAD,
        put("spec.controllerRef", {"apiGroup": "batch", "kind": "Job", "name": "train"}),
        ["spec.controllerRef: Invalid value: null: field is immutable"]),
    "a pod group's labels may change": ("scheduling.k8s.io", "podgroups", True, True, POD_GROUP, LABELS, []),
    "a pod group's fixed fields are reported in declaration order": (
        "scheduling.k8s.io", "podgroups", True, True, POD_GROUP,
        # A gang still: a basic group may not be disrupted as a whole, a cause of its own.
        both(put("spec.priorityClassName", "low"), put("spec.schedulingPolicy", {"gang": {"minCount": 8}}),
             put("spec.disruptionMode", "PodGroup")),
        ["spec.schedulingPolicy: Invalid value: null: field is immutable",
         "spec.disruptionMode: Invalid value: null: field is immutable",
         "spec.priorityClassName: Invalid value: null: field is immutable"]),
    "a pod group spelling out its default disruption mode changes nothing": (
        "scheduling.k8s.io", "podgroups", True, True, POD_GROUP, put("spec.disruptionMode", "Pod"), []),
    "a role binding's subjects may change": ("rbac.authorization.k8s.io", "rolebindings", True, False, ROLE_BINDING,
                                             put("subjects", [{"kind": "User", "name": "bob"}]), []),
    "a role binding's roleRef may not change": (
        "rbac.authorization.k8s.io", "rolebindings", True, False, ROLE_BINDING, put("roleRef.name", "writer"),
        ['roleRef: Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"writer"}: '
         'cannot change roleRef']),
    "a cluster role binding's roleRef may not change": (
        "rbac.authorization.k8s.io", "clusterrolebindings", False, False,
        {**ROLE_BINDING, "metadata": {"name": "read"}, "roleRef": {"kind": "ClusterRole", "name": "view"}},
        put("roleRef.name", "edit"), ['roleRef: Invalid value: {"apiGroup":"","kind":"ClusterRole","name":"edit"}: '
                                      'cannot change roleRef']),
    "a storage class may allow expansion later": ("storage.k8s.io", "storageclasses", False, False, STORAGE_CLASS,
                                                  put("allowVolumeExpansion", True), []),
    "a storage class spelling out its defaults changes nothing": (
        "storage.k8s.io", "storageclasses", False, False, STORAGE_CLASS,
        both(put("reclaimPolicy", "Delete"), put("volumeBindingMode", "Immediate")), []),
    "a storage class keeps its parameters, provisioner, policy and binding mode": (
        "storage.k8s.io", "storageclasses", False, False, STORAGE_CLASS,
        both(put("parameters", {}), put("provisioner", "other.example.com"), put("reclaimPolicy", "Retain"),
             put("volumeBindingMode", "WaitForFirstConsumer")),
        ["parameters: Forbidden: updates to parameters are forbidden.",
         "provisioner: Forbidden: updates to provisioner are forbidden.",
         "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
         'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable']),
    "a volume attachment's spec may not change": (
        "storage.k8s.io", "volumeattachments", False, True, VOLUME_ATTACHMENT, put("spec.nodeName", "node-b"),
        ['spec: Invalid value: {"attacher":"csi.example.com","nodeName":"node-b","source":{"persistentVolumeName":'
         '"pv-1"}}: field is immutable']),
    "a CSI driver may change podInfoOnMount": ("storage.k8s.io", "csidrivers", False, False, CSI_DRIVER,
                                               put("spec.podInfoOnMount", True), []),
    "a CSI driver keeps attachRequired under upstream's misspelt path": (
        "storage.k8s.io", "csidrivers", False, False, CSI_DRIVER,
        both(put("spec.attachRequired", False), put("spec.volumeLifecycleModes", ["Ephemeral"])),
        ["spec.attachedRequired: Invalid value: false: field is immutable",
         'spec.volumeLifecycleModes: Invalid value: ["Ephemeral"]: field is immutable']),
    "a storage capacity may change its capacity": ("storage.k8s.io", "csistoragecapacities", True, False, CAPACITY,
                                                   put("capacity", "5Gi"), []),
    "a storage capacity keeps its class and topology": (
        "storage.k8s.io", "csistoragecapacities", True, False, CAPACITY,
        both(put("storageClassName", "slow"), put("nodeTopology", None)),
        ["nodeTopology: Invalid value: null: field is immutable",
         'storageClassName: Invalid value: "slow": field is immutable']),
    "a volume attributes class keeps its driver and parameters": (
        "storage.k8s.io", "volumeattributesclasses", False, False, ATTRIBUTES_CLASS,
        both(put("driverName", "other.example.com"), put("parameters", {"iops": "200"})),
        ["driverName: Forbidden: updates to driverName are forbidden.",
         "parameters: Forbidden: updates to parameters are forbidden."]),
    "an ingress class may change its parameters": (
        "networking.k8s.io", "ingressclasses", False, False, INGRESS_CLASS,
        put("spec.parameters", {"kind": "IngressParameters", "name": "p", "apiGroup": "k8s.example.com"}), []),
    "an ingress class keeps its controller": ("networking.k8s.io", "ingressclasses", False, False, INGRESS_CLASS,
                                              put("spec.controller", "example.com/other"),
                                              ['spec.controller: Invalid value: "example.com/other": field is immutable']),
    "a runtime class may change its overhead": ("node.k8s.io", "runtimeclasses", False, False, RUNTIME_CLASS,
                                                put("overhead", {"podFixed": {"cpu": "100m"}}), []),
    "a runtime class keeps its handler": ("node.k8s.io", "runtimeclasses", False, False, RUNTIME_CLASS,
                                          put("handler", "kata"), ['handler: Invalid value: "kata": field is immutable']),
    "an endpoint slice may change its endpoints": ("discovery.k8s.io", "endpointslices", True, False, ENDPOINT_SLICE,
                                                   put("endpoints", []), []),
    "an endpoint slice keeps its address type": ("discovery.k8s.io", "endpointslices", True, False, ENDPOINT_SLICE,
                                                 put("addressType", "IPv6"),
                                                 ['addressType: Invalid value: "IPv6": field is immutable']),
    "an IP address keeps its parent": (
        "networking.k8s.io", "ipaddresses", False, False, IP_ADDRESS, put("spec.parentRef.name", "other"),
        ['spec.parentRef: Invalid value: {"group":"","resource":"services","namespace":"default","name":"other"}: '
         'field is immutable']),
    "a controller revision keeps its data": ("apps", "controllerrevisions", True, False, REVISION,
                                             put("data", {"spec": {"replicas": 2}}),
                                             ['data: Invalid value: {"spec":{"replicas":2}}: field is immutable']),
    "a quota may change its hard limits and reorder its scopes": (
        "", "resourcequotas", True, True, QUOTA,
        both(put("spec.hard", {"pods": "20"}), put("spec.scopes", ["NotBestEffort", "NotTerminating"])), []),
    "a quota keeps its scopes": ("", "resourcequotas", True, True, QUOTA, put("spec.scopes", ["NotTerminating"]),
                                 ['spec.scopes: Invalid value: ["NotTerminating"]: field is immutable']),
    "a persistent volume may grow and change its reclaim policy": (
        "", "persistentvolumes", False, True, VOLUME,
        both(put("spec.capacity", {"storage": "20Gi"}), put("spec.persistentVolumeReclaimPolicy", "Delete")), []),
    "a persistent volume keeps its source, volume mode and node affinity": (
        "", "persistentvolumes", False, True, VOLUME,
        both(put("spec.nfs.path", "/b"), put("spec.volumeMode", "Block"), put("spec.nodeAffinity", None)),
        ['spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n'
         '- spec.nfs.path: "/a"\n+ spec.nfs.path: "/b"',
         'volumeMode: Invalid value: "Block": field is immutable',
         "nodeAffinity: Invalid value: null: field is immutable"]),
    "a pod certificate request keeps every spec field": (
        "certificates.k8s.io", "podcertificaterequests", True, True, PCR,
        both(put("spec.podName", "q"), put("spec.maxExpirationSeconds", 3600)),
        ['spec.podName: Invalid value: "q": field is immutable',
         "spec.maxExpirationSeconds: Invalid value: 3600: field is immutable"]),
    "a lease candidate keeps its lease name": ("coordination.k8s.io", "leasecandidates", True, False, CANDIDATE,
                                               put("spec.leaseName", "controller-manager"),
                                               ['spec.leaseName: Invalid value: "controller-manager": field is immutable']),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_update_rules(case):
    group, resource, namespaced, has_status, obj, edit, expected = case
    s = strategy(group, resource, namespaced=namespaced, has_status=has_status)
    old = created(s, edited(obj))
    new = edited(old)
    edit(new)
    assert messages(update(s, new, old)) == expected


@pytest.mark.parametrize("group, resource, counted", [
    ("resource.k8s.io", "resourceslices", True),
    ("resource.k8s.io", "deviceclasses", True),
    ("networking.k8s.io", "ingressclasses", True),
    ("storage.k8s.io", "volumeattachments", False),
], ids=["slices count spec changes", "device classes count spec changes", "ingress classes count spec changes",
        "volume attachments keep no generation"])
def test_generation_follows_upstream(group, resource, counted):
    obj = {"resourceslices": SLICE, "deviceclasses": DEVICE_CLASS, "ingressclasses": INGRESS_CLASS,
           "volumeattachments": VOLUME_ATTACHMENT}[resource]
    s = strategy(group, resource, namespaced=False, has_status=resource == "volumeattachments")
    old = created(s, edited(obj))
    new = edited(old)
    new["spec"]["changed"] = True
    s.prepare_for_update(new, old)
    assert (old["metadata"].get("generation"), new["metadata"].get("generation")) == ((1, 2) if counted else (None, None))


POD = {"metadata": {"name": "p0", "namespace": "default"},
       "spec": {"schedulingGroup": {"podGroupName": "train-workers-0"}, "containers": [{"name": "c", "image": "busybox"}]}}


@pytest.mark.parametrize("edit, expected", [
    (lambda pod: pod["spec"]["containers"][0].update(image="registry.example.com/busybox"), []),
    (put("spec.schedulingGroup", {"podGroupName": "train-workers-1"}),
     ["spec: Forbidden: pod updates may not change fields other than"]),
    (put("spec.schedulingGroup", None), ["spec: Forbidden: pod updates may not change fields other than"]),
], ids=["a grouped pod may change its image", "a pod may not move to another pod group",
        "a pod may not leave its pod group"])
def test_a_pods_scheduling_group_is_fixed(edit, expected):
    s = strategy("", "pods")
    old = created(s, edited(POD))
    new = edited(old)
    edit(new)
    assert [m.split("`spec.containers")[0].rstrip() for m in messages(update(s, new, old))] == expected


BOUND_CLAIM = {"metadata": {"name": "data", "namespace": "default"},
               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}},
                        "volumeAttributesClassName": "gold"}}


@pytest.mark.parametrize("status, edit, expected", [
    ({}, put("spec.volumeAttributesClassName", "silver"), []),
    ({}, put("spec.volumeAttributesClassName", None),
     ["spec.volumeAttributesClassName: Forbidden: update from non-nil value to nil is forbidden"]),
    ({"phase": "Bound", "capacity": {"storage": "10Gi"}}, put("spec.resources.requests.storage", "15Gi"), []),
    ({"phase": "Bound", "capacity": {"storage": "10Gi"}}, put("spec.resources.requests.storage", "10Gi"),
     ["spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"]),
    ({}, put("spec.volumeMode", "Block"),
     ["spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for "
      'bound claims\n- spec.volumeMode: "Filesystem"\n+ spec.volumeMode: "Block"',
      'volumeMode: Invalid value: "Block": field is immutable']),
], ids=["an unbound claim may change its attributes class", "but not drop it",
        "a bound claim may shrink a failed expansion back towards its capacity", "but not down to it",
        "the volume mode is reported twice, as upstream does"])
def test_claim_update_rules(status, edit, expected):
    s = strategy("", "persistentvolumeclaims")
    old = created(s, edited(BOUND_CLAIM))
    old["status"] = status or old["status"]
    new = edited(old)
    edit(new)
    assert messages(update(s, new, old)) == expected
