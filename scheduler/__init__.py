"""haru's scheduler: a co-process that places pods on nodes as kube-scheduler does.

It reads the cluster through `client/` informers and binds through `pods/binding`, so it works
against any cluster. `framework/` holds the extension-point contracts, Status codes, CycleState,
NodeInfo and the snapshot; `plugins/` one module per upstream plugin; `dra/` the structured
allocator. The queue, cache, cycle and binding live beside this file.
"""
