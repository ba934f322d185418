"""The configuration the scheduler starts with: a `--config` file, or 1.36's default profile.

`load_config(path, features, scheduler_name)` is the one place `python -m scheduler`, `haru up`'s
check of `--scheduler-config` and the supervisor's embedded start get a `SchedulerConfig` from;
`scheduler.config` reads and checks the file (or builds the defaults), and `--scheduler-name`
renames the first profile here. `default_config` is the same without a file, for tests.
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler import config as scheduler_config
from scheduler.config.types import SchedulerConfig


def default_config(features: Mapping[str, bool], scheduler_name: str = "default-scheduler") -> SchedulerConfig:
    return load_config(None, features, scheduler_name)


def load_config(path: str | None, features: Mapping[str, bool], scheduler_name: str | None = None) -> SchedulerConfig:
    """The file at `path` (or the defaults); `scheduler_name` renames the first profile (--scheduler-name)."""
    config = scheduler_config.load(path, features)
    if scheduler_name:
        config.profiles[0].scheduler_name = scheduler_name
    return config
