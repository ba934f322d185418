"""The in-tree plugins, one module per plugin, named as upstream names it (`names.py`).

Each module has one plugin class and a `new(args, handle, features)` factory; `scheduler/registry.py`
maps the upstream names to those factories. A few modules hold what several plugins share, as
upstream's helpers do: `tolerations`, `node_selectors`, `normalize_score`, `resource_allocation`.
"""
