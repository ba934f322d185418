"""Admission: the mutating and validating chain every write passes through.

`admission.cel` is the one CEL environment (policies, CRD rules, DRA device selectors). On it:
`chain.py` (the two passes and reinvocation), `assembly.py` (which plugins, in upstream's
order), `plugins/` (LimitRanger, Priority, ResourceQuota), `policy/` (ValidatingAdmissionPolicy,
MutatingAdmissionPolicy, manifest policies). Requests are `attributes.Attributes`, refusals
`errors.Rejection`, and everything read from the cluster comes through a `view.ClusterView`
the API server lends (`apiserver/admitting.py`); `apiserver` calls the chain, never the other way.
"""
