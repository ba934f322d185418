"""Subresources with their own shapes: scale, binding, eviction, token, finalize, and the
connect ones (log, exec, attach, portforward, proxy) that need a node. `app.py` routes
`<resource>/<subresource>` here through `ROUTES`; status and other whole-object subresources
reuse the verb handlers with a narrower strategy.
"""
