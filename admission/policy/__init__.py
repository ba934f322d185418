"""ValidatingAdmissionPolicy and MutatingAdmissionPolicy: compile, match, evaluate, report.

`source.py` keeps the stored policies compiled (and the manifest ones, `manifests.py`);
`matching.py` and `params.py` decide which (policy, binding, param) triples apply;
`evaluation.py` runs expressions; `validating.py` and `mutating.py` are the two plugins;
`type_checking.py` computes a VAP's status warnings.
"""
