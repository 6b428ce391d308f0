"""Running `spatialgap evaluate` as a user does: a real subprocess, real loopback servers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO, VENV_BIN


def evaluate_cmd(out: Path, *args: str) -> list[str]:
    return [str(VENV_BIN / "spatialgap"), "evaluate", "--out", str(out), "--no-progress", *args]


def run_evaluate(
    out: Path, *args: str, env: dict | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    return subprocess.run(
        evaluate_cmd(out, *args),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(REPO),
        env={**os.environ, **(env or {})},
    )


class ServedAgent:
    """`spatialgap serve-agent` in its own process, for a test to configure as an external model."""

    def __init__(self, agent: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scoring", "serve-agent", "--agent", agent, "--port", "0"],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            cwd=str(REPO),
        )
        deadline = time.monotonic() + 60
        assert self.proc.stderr is not None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            m = re.search(r"on (http://\S+/v1)", line)
            if m:
                self.base_url = m.group(1)
                return
            if not line and self.proc.poll() is not None:
                break
        self.stop()
        raise RuntimeError(f"serve-agent {agent} did not start")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)


def models_toml(path: Path, models: dict[str, dict]) -> Path:
    lines = []
    for name, fields in models.items():
        lines.append(f"[models.{name}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in fields.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def verdict_rows(results: Path) -> list[dict]:
    return [json.loads(line) for line in (results / "verdicts.jsonl").read_text().splitlines() if line]
