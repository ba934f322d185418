"""`until(check, what)`: poll a kubectl-driven check until it answers something truthy.

The e2e tests drive kubectl as a subprocess, so each round is one kubectl call; `rounds` bounds a
broken run instead of a clock (the machines are shared and noisy). Used by the RBAC, service
account and kubectl-command tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def until(check: Callable[[], Any], what: str, rounds: int = 100) -> Any:
    for _ in range(rounds):
        result = check()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"never happened: {what}")
