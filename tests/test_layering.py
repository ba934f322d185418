"""ARCHITECTURE's "may import" column, enforced: `.importlinter` holds the contracts (STYLE.md #10).

storage imports nothing of ours; admission nothing of the API server; client and controllers reach the
cluster only over HTTP; the API server imports no client, controller or command code; co-processes
do not import the command. No module imports itself through others.
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


def test_no_module_imports_itself_through_others() -> None:
    """A circle of imports means two modules share a name that has no one home (STYLE.md #11).

    Every import counts, also those inside functions and under TYPE_CHECKING: a lazy import is
    still a circle, only hidden from the interpreter.
    """
    import grimp

    graph = grimp.build_graph(*_our_packages())
    circles = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if imported != module and back:
                circles.add(" -> ".join((module, *back)))
    assert not circles, sorted(circles)


def _our_packages() -> list[str]:
    import configparser

    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, ".importlinter"))
    return config["importlinter"]["root_packages"].split()
