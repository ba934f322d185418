"""The scheduler's configuration: a KubeSchedulerConfiguration file read, checked and defaulted.

`types.py` holds the shapes the rest of the scheduler reads (`SchedulerConfig`, `Profile`,
`PluginRef`); loading, validation with upstream's field paths, and defaults live beside it.
"""
