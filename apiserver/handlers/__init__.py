"""One module per verb; each exposes `async def handle(ep, request) -> web.StreamResponse`.

`app.py` parses the request (requestinfo), resolves the endpoint (context.endpoint_for), checks the
verb against the registry row, and calls the matching module. Subresources with their own rules
(scale, binding, eviction, token, reviews) live in `apiserver/subresources/`.
"""
