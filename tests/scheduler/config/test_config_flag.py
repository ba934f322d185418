"""`python -m scheduler --config FILE` refuses a malformed file before connecting: exit 1, upstream's text.

Runs the real command as a subprocess. The kubeconfig points nowhere on purpose: the file is read
and checked first, so the refusal must come without any API server.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(not (REPO / "scheduler" / "__main__.py").exists(),
                                reason="python -m scheduler arrives with the scheduler core (git merge main)")

CASES = [
    pytest.param("profiles:\n- schedulerName: a\n- schedulerName: a\n",
                 "couldn't create scheduler: profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName",
                 id="a duplicate schedulerName"),
    pytest.param("profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeResourcesFit\n        weight: x\n",
                 "couldn't create scheduler: json: cannot unmarshal string into Go struct field "
                 "Plugin.profiles.plugins.score.enabled.weight of type int32", id="a weight that is not a number"),
    pytest.param("profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: Nope\n",
                 'couldn\'t create scheduler: initializing profiles: creating profile for scheduler name '
                 'default-scheduler: FilterPlugin "Nope" does not exist', id="an unknown plugin"),
    pytest.param("profiles:\n  - schedulerName: a\n   bad: indent\n", "couldn't create scheduler: yaml: line 4: did not find expected '-' indicator",
                 id="a YAML syntax error"),
]


@pytest.mark.parametrize("body, message", CASES)
def test_a_bad_config_file_stops_the_scheduler_with_the_reason(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body)
    result = subprocess.run([sys.executable, "-m", "scheduler", "--kubeconfig", str(tmp_path / "none"),
                             "--config", str(path)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr
