"""Go-style command-line flag values, for the flags haru's commands share with kube's components.

`go_bool("false")` reads a boolean as Go's flag package does (`true`/`t`/`1`, `false`/`f`/`0`, any
case) and refuses anything else with Go's text. An argparse `type=`: `haru up
--enable-priority-and-fairness` (`cluster/cli.py`) and `python -m controllers
--use-service-account-credentials` (`controllers/__main__.py`).
"""

from __future__ import annotations

import argparse


def go_bool(raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("true", "t", "1"):
        return True
    if value in ("false", "f", "0"):
        return False
    raise argparse.ArgumentTypeError(f'invalid boolean value "{raw}"')
