"""Running the real commands against the hostile endpoint: subprocesses with bounded waits."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import REPO, VENV_BIN

# A bound on how long a command may take to end, never a measure of speed: a hang fails here.
BOUND_S = 120
KEY = "sk-hostile-SECRET-0123456789abcdef"


def spatialgap(*args: str, env: dict | None = None, timeout: float = BOUND_S) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(VENV_BIN / "spatialgap"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(REPO),
        env={**os.environ, **(env or {})},
    )


def run_cmd(bench: Path, url: str, out: Path, *extra: str, kind: str = "openai") -> list[str]:
    return [
        "run", "--bench", str(bench), "--endpoint", url, "--kind", kind, "--model", "m",
        "--modality", "geojson", "--task", "qa", "--out", str(out), "--no-progress", *extra,
    ]  # fmt: skip


def records(journal: Path) -> list[dict]:
    return [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines() if line.strip()]


def one_line_error(proc: subprocess.CompletedProcess, command: str = "run") -> str:
    """The command's error: its last stderr line, and no traceback anywhere."""
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"spatialgap {command}: error: "), proc.stderr[-2000:]
    return last
