"""Server-side apply with field ownership, as structured-merge-diff and kube's field manager do it.

Entry points: `apply.apply()` (the apply-patch path of `handlers/patch.py`) and, for Update
operations, `apiserver/managed_fields.py`, which builds on the same pieces. Inside:
`shapes` reads schemas, `fieldsets` is the FieldsV1 set algebra, `elements` names list items,
`to_set` / `compare` / `merge` / `remove` walk values, `updater` is the ownership engine,
`managers` encodes managedFields, `last_applied` and `conflicts` are kubectl's and the wire's edges.
"""
