"""Admission: the mutating and validating chain every write passes through.

`admission.cel` is the one CEL environment (policies, CRD rules, DRA device selectors). The
chain itself (built-in plugins, MutatingAdmissionPolicy, ValidatingAdmissionPolicy) is built on
top of it by its own modules; `apiserver` calls the chain, never the other way round.
"""
