"""The DRA structured allocator (upstream k8s.io/dynamic-resource-allocation/structured), as a library.

`inventory.Inventory` holds the ResourceSlices by pool, kept across scheduling cycles and fed by
informer events; `allocator.AllocatedState.of(claims)` says what allocated claims hold;
`allocator.Allocator(...).allocate(node, claims)` searches devices for a pod's claims on one node
and returns their `status.allocation` objects. The DynamicResources plugin calls it from Filter.
Nothing here talks to the API server.
"""
