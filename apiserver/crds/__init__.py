"""CustomResourceDefinitions: what makes a stored CRD a live API without a restart.

`controller.py` (started by `runner.start`) watches the CRD prefix of the store, checks names,
writes the `NamesAccepted`/`Established` conditions and adds or removes registry rows built by
`definition.py`; `served.py` is where the strategy table (`kinds`) and the printers (`tables`)
find the live definitions. Writes of custom resources go through `strategy.py` (schema
validation, defaults, CEL rules); reads pass through `output.py` (version and read-time defaults).
CRD objects themselves are checked by `crd_strategy.py`. Import submodules directly.
"""
