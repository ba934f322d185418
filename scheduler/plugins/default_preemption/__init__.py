"""DefaultPreemption, as one small package because upstream keeps the generic part apart.

- `plugin`: the DefaultPreemption plugin (PostFilter, PreEnqueue) and its victim rules; `new` is
  the factory `scheduler/registry.py` maps the name to;
- `evaluator`: the preemption flow any preemption plugin shares (candidates, dry run, choice);
- `executor`: the API calls that evict the victims, in the cycle or in the background;
- `ordering`: victim importance and candidate-node ranking; `pdb`: PodDisruptionBudget accounting.
"""

from scheduler.plugins.default_preemption.plugin import DefaultPreemption, new

__all__ = ["DefaultPreemption", "new"]
