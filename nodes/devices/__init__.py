"""The virtual GPU DRA driver (`gpu.nvidia.com`) of the hollow nodes, and its optional device kinds.

`config` parses a node's `devices` mapping, `presets` the GPU models, `names` the wire names,
`inventory` the node's hardware, `slices` the ResourceSlices as NVIDIA's kubelet plugin writes
them, `publisher` keeps them current, `health`/`fault` the device faults and taints, `binding`
the NIC attach step, `claims`/`container` what a container holds and sees, and `driver` ties
them together for one node. The kubelet (`nodes/kubelet/devices_seam.py`) calls
`nodes.devices.publish(client=, node=, devices=)` (that is `driver.start`) once its Node is
registered, and asks the returned `Driver` while it runs pods.
"""

from nodes.devices.driver import Driver, start as publish

__all__ = ["Driver", "publish"]
