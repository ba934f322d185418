"""ARCHITECTURE's "may import" column, enforced: `.importlinter` holds the contracts (STYLE.md #10).

storage imports nothing of ours; admission nothing of the API server; client and controllers reach the
cluster only over HTTP; the API server imports no client, controller or command code.
"""

from __future__ import annotations

import os

from importlinter.cli import lint_imports

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_layering_contract_is_kept() -> None:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exit_code = lint_imports(config_filename=os.path.join(ROOT, ".importlinter"), no_cache=True)
    finally:
        os.chdir(cwd)
    assert exit_code == 0
