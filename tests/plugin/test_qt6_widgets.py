"""The plugin's Qt widgets under PyQt6 (Qt 6, as QGIS 4 runs them), offscreen, in the venv that
`make qt6` builds (.venv/qt6): Debian's QGIS here is Qt 5, and Qt 5 and 6 cannot share a process."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QT6_PYTHON = ROOT / ".venv" / "qt6" / "bin" / "python"


@pytest.mark.skipif(not QT6_PYTHON.exists(), reason="no PyQt6 venv: run `make qt6`")
def test_the_plugin_widgets_run_under_pyqt6(small_bench):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [str(QT6_PYTHON), str(ROOT / "tests" / "plugin" / "qt6" / "probe.py"), str(small_bench)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and "qt6 widgets ok" in done.stdout, done.stderr[-3000:]
