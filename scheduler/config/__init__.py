"""The scheduler's configuration: a KubeSchedulerConfiguration file read, checked and defaulted.

`types.py` holds the shapes the rest of the scheduler reads (`SchedulerConfig`, `Profile`,
`PluginRef`). `load(path, features)` and `default(features)` (`loading.py`) produce them:
`decoding.py` reads the file strictly, `defaults.py` and `plugin_args.py` fill in 1.36's
defaults, `validation.py` and `expansion.py` refuse what kube-scheduler refuses (`ConfigError`).
"""

from scheduler.config.errors import ConfigError
from scheduler.config.loading import default, load

__all__ = ["ConfigError", "default", "load"]
