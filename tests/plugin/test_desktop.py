"""The real QGIS desktop app under Xvfb (tools/screenshot.py): the plugin installed from the zip
runs an instance against the `tools` agent, then against an endpoint refusing the key — the
outcome is critical and carries the server's message. Slower (two QGIS start-ups at most)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DESKTOP_BOUND_S = 240


@pytest.mark.timeout(DESKTOP_BOUND_S + 120)
def test_desktop_run_then_refused_key(small_bench, tmp_path):
    missing = [tool for tool in ("qgis", "xvfb-run", "lrelease") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"the desktop test needs {', '.join(missing)} (make screenshot installs qgis)")
    zip_path = tmp_path / "spatialgap.zip"
    subprocess.run([sys.executable, str(ROOT / "tools" / "make_zip.py"), "--out", str(zip_path)], check=True)
    out = tmp_path / "shots" / "screenshot.png"
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "screenshot.py"),
            "--zip",
            str(zip_path),
            "--bench",
            str(small_bench),
            "--out",
            str(out),
            "--timeout",
            str(DESKTOP_BOUND_S - 60),
        ],
        capture_output=True,
        text=True,
        timeout=DESKTOP_BOUND_S + 60,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert out.is_file() and (tmp_path / "shots" / "screenshot-failing.png").is_file()
    failing = json.loads(Path(str(out) + ".failing.json").read_text())
    assert failing["level"] == 2 and "Incorrect API key" in failing["text"]  # Qgis.Critical
