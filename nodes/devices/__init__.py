"""The virtual GPU DRA driver (`gpu.nvidia.com`) of the hollow nodes, and its optional device kinds.

`config` parses a node's `devices` mapping, `presets` the GPU models, `names` the wire names,
`inventory` the node's hardware, `slices` the ResourceSlices as NVIDIA's kubelet plugin writes
them, `publisher` keeps them current, `health`/`fault` the device faults and taints, `binding`
the NIC attach step, `claims`/`container` what a container holds and sees. The kubelet
(`nodes/kubelet/`) starts `publisher.publish` per GPU node and asks `container` and `health`
when it runs a pod.
"""
