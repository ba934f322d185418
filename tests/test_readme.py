"""The README's two commands are the project's promise; CI must run the test one as it is written.

`.ci/run` builds a fresh virtualenv and runs the README's test command byte for byte inside it, so
a package installed on the machine by hand cannot make CI green. These checks keep the two files
from drifting apart.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", quick_start)


def test_quick_start_gives_two_commands():
    commands = _readme_commands()
    assert len(commands) == 2, commands
    assert commands[0].endswith("haru up")


def test_ci_runs_the_readme_test_command_byte_for_byte():
    ci_lines = (REPO / ".ci" / "run").read_text().splitlines()
    assert ci_lines[-1] == _readme_commands()[1]


def test_ci_runs_inside_a_fresh_virtualenv():
    script = (REPO / ".ci" / "run").read_text()
    venv_at = script.index("-m venv")
    assert script.index("/bin/activate") > venv_at
    assert script.rindex(_readme_commands()[1]) > script.index("/bin/activate")


def _fixture_example() -> str:
    text = (REPO / "README.md").read_text()
    section = text.split("## Testing an operator", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.+?)\n```", section, re.S)
    assert len(blocks) == 1, blocks
    return blocks[0]


def test_the_readme_fixture_example_runs(haru_cluster):
    """The README's operator example, byte for byte, against the `haru_cluster` fixture it names."""
    namespace: dict[str, object] = {}
    exec(compile(_fixture_example(), "README.md (fixture example)", "exec"), namespace)
    tests = [value for name, value in namespace.items() if name.startswith("test_") and callable(value)]
    assert len(tests) == 1, sorted(namespace)
    tests[0](haru_cluster)  # type: ignore[operator]
    from kubernetes import client
    deployment = client.AppsV1Api(haru_cluster.api_client).read_namespaced_deployment("web", "default")
    assert deployment.status.available_replicas == 2
