"""The KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) field tree, for strict decoding.

Each struct lists its JSON field names and their types, with the Go struct name upstream's decoder
quotes in type errors. The plugin args kinds (`<Plugin>Args`) are separate roots: upstream decodes
each `pluginConfig[].args` on its own, so their paths start at the args object. `decoding.py`
walks a parsed document against these trees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class ListOf:
    item: "Type"


@dataclass(frozen=True)
class MapOf:
    value: "Type"


@dataclass(frozen=True)
class Struct:
    go_name: str
    fields: dict[str, "Type"] = field(default_factory=dict)


# Scalars by Go type name; "duration" is a metav1.Duration ("10s"), "any" is decoded as is.
Type = Union[str, ListOf, MapOf, Struct]

PLUGIN = Struct("Plugin", {"name": "string", "weight": "int32"})
PLUGIN_SET = Struct("PluginSet", {"enabled": ListOf(PLUGIN), "disabled": ListOf(PLUGIN)})
PLUGINS = Struct("Plugins", {point: PLUGIN_SET for point in (
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
    "permit", "preBind", "bind", "postBind", "placementGenerate", "placementScore", "multiPoint")})
PLUGIN_CONFIG = Struct("PluginConfig", {"name": "string", "args": "any"})
PROFILE = Struct("KubeSchedulerProfile", {
    "schedulerName": "string", "percentageOfNodesToScore": "int32", "plugins": PLUGINS,
    "pluginConfig": ListOf(PLUGIN_CONFIG)})
LEADER_ELECTION = Struct("LeaderElectionConfiguration", {
    "leaderElect": "bool", "leaseDuration": "duration", "renewDeadline": "duration", "retryPeriod": "duration",
    "resourceLock": "string", "resourceName": "string", "resourceNamespace": "string"})
CLIENT_CONNECTION = Struct("ClientConnectionConfiguration", {
    "kubeconfig": "string", "acceptContentTypes": "string", "contentType": "string", "qps": "float32",
    "burst": "int32"})
EXTENDER = Struct("Extender", {
    "urlPrefix": "string", "filterVerb": "string", "preemptVerb": "string", "prioritizeVerb": "string",
    "weight": "int64", "bindVerb": "string", "enableHTTPS": "bool", "tlsConfig": "any", "httpTimeout": "duration",
    "nodeCacheCapable": "bool", "managedResources": "any", "ignorable": "bool"})
CONFIGURATION = Struct("KubeSchedulerConfiguration", {
    "apiVersion": "string", "kind": "string", "parallelism": "int32", "leaderElection": LEADER_ELECTION,
    "clientConnection": CLIENT_CONNECTION, "enableProfiling": "bool", "enableContentionProfiling": "bool",
    "percentageOfNodesToScore": "int32", "podInitialBackoffSeconds": "int64", "podMaxBackoffSeconds": "int64",
    "profiles": ListOf(PROFILE), "extenders": ListOf(EXTENDER), "delayCacheUntilActive": "bool"})

_TYPE_META = {"apiVersion": "string", "kind": "string"}
RESOURCE_SPEC = Struct("ResourceSpec", {"name": "string", "weight": "int64"})
SHAPE_POINT = Struct("UtilizationShapePoint", {"utilization": "int32", "score": "int32"})
_MATCH = ListOf(Struct("NodeSelectorRequirement", {"key": "string", "operator": "string", "values": ListOf("string")}))
_TERM = Struct("NodeSelectorTerm", {"matchExpressions": _MATCH, "matchFields": _MATCH})
NODE_AFFINITY = Struct("NodeAffinity", {
    "requiredDuringSchedulingIgnoredDuringExecution": Struct("NodeSelector", {"nodeSelectorTerms": ListOf(_TERM)}),
    "preferredDuringSchedulingIgnoredDuringExecution": ListOf(
        Struct("PreferredSchedulingTerm", {"weight": "int32", "preference": _TERM}))})
SPREAD_CONSTRAINT = Struct("TopologySpreadConstraint", {
    "maxSkew": "int32", "topologyKey": "string", "whenUnsatisfiable": "string", "labelSelector": "any",
    "minDomains": "int32", "nodeAffinityPolicy": "string", "nodeTaintsPolicy": "string",
    "matchLabelKeys": ListOf("string")})

ARGS: dict[str, Struct] = {
    "DefaultPreemption": Struct("DefaultPreemptionArgs", {
        **_TYPE_META, "minCandidateNodesPercentage": "int32", "minCandidateNodesAbsolute": "int32"}),
    "InterPodAffinity": Struct("InterPodAffinityArgs", {
        **_TYPE_META, "hardPodAffinityWeight": "int32", "ignorePreferredTermsOfExistingPods": "bool"}),
    "NodeAffinity": Struct("NodeAffinityArgs", {**_TYPE_META, "addedAffinity": NODE_AFFINITY}),
    "NodeResourcesBalancedAllocation": Struct("NodeResourcesBalancedAllocationArgs", {
        **_TYPE_META, "resources": ListOf(RESOURCE_SPEC)}),
    "NodeResourcesFit": Struct("NodeResourcesFitArgs", {
        **_TYPE_META, "ignoredResources": ListOf("string"), "ignoredResourceGroups": ListOf("string"),
        "scoringStrategy": Struct("ScoringStrategy", {
            "type": "string", "resources": ListOf(RESOURCE_SPEC),
            "requestedToCapacityRatio": Struct("RequestedToCapacityRatioParam", {"shape": ListOf(SHAPE_POINT)})})}),
    "PodTopologySpread": Struct("PodTopologySpreadArgs", {
        **_TYPE_META, "defaultConstraints": ListOf(SPREAD_CONSTRAINT), "defaultingType": "string"}),
    "VolumeBinding": Struct("VolumeBindingArgs", {
        **_TYPE_META, "bindTimeoutSeconds": "int64", "shape": ListOf(SHAPE_POINT)}),
    "DynamicResources": Struct("DynamicResourcesArgs", {
        **_TYPE_META, "filterTimeout": "duration", "bindingTimeout": "duration"}),
}
