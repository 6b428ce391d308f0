"""Every Processing algorithm (alone, in a model, in a batch) and every dock action runs in a
Python holding only what the plugin's installer installs (tests/plugin/installed_only.py blocks
the rest): the plugin's own tests, run again in a child pytest under that block."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD_BOUND_S = 1500
# Processing (each algorithm, a model, a batch), the dock (open, show, send to a model, score
# runs, exports, the human baseline with live checks, hand edits, drawings and keys) and the
# plugin's load.
COVERED = (
    "tests/plugin/test_processing.py",
    "tests/plugin/test_runs.py::test_task_round_trip_with_tools_agent",
    "tests/plugin/test_plugin_gui.py::test_plugin_loads_and_unloads",
    "tests/plugin/test_plugin_gui.py::test_exports",
    "tests/plugin/test_help_and_runs.py",
    "tests/plugin/test_human_session.py",
    "tests/plugin/test_constraints.py",
    "tests/plugin/test_layers_kept.py",
    "tests/plugin/test_keys.py",
    "tests/plugin/test_drawings.py",
)


def test_blocked_modules_really_fail_to_import():
    code = (
        "import tests.plugin.installed_only\n"
        "try:\n import tqdm\nexcept ImportError as e:\n print('blocked', e)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("blocked"), out.stderr[-2000:]


@pytest.mark.timeout(CHILD_BOUND_S + 60)
def test_plugin_paths_run_with_only_what_the_installer_installs(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests.plugin.installed_only",
            "-p",
            "no:cacheprovider",
            "--basetemp",
            str(tmp_path / "child"),
            *COVERED,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=CHILD_BOUND_S,
    )
    tail = run.stdout[-4000:] + run.stderr[-2000:]
    assert run.returncode == 0, tail
    assert "installed-only: blocked tqdm" in run.stdout and "imported anyway: []" in run.stdout, tail
    passed = re.search(r"(\d+) passed", run.stdout)
    assert passed and int(passed.group(1)) >= 20, tail
    assert " skipped" not in run.stdout.splitlines()[-1], tail  # nothing hidden by a skip
