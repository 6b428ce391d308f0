"""`spatialgap evaluate` at first contact (real subprocesses, real loopback servers): every model
stopped ends promptly with exit 3 and every child ended; SIGTERM and a terminal's Ctrl-C (to the
whole process group) end it as Ctrl-C does, without a worker's traceback; a reply with an
unpaired surrogate and a key echoed by an endpoint lose nothing and leak nothing."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from fakeserver import FaultServer

from scoring.formats.rundir import read_records
from tests.conftest import REPO
from tests.evaluate.sweep_helpers import evaluate_cmd, models_toml
from tests.hostile.server import HostileServer

BOUND_S = 300  # a bound on the whole sweep, never a measure of speed
ARGS = ["--agents", "none", "--modalities", "geojson", "--tasks", "qa", "--qa", "1", "--edit", "0"]
KEY = "sk-sweep-SECRET-0123456789abcdef"
AS_FROM_A_TERMINAL = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])",
]


def _marked(mark: str) -> list[int]:
    """Pids of live processes whose environment holds ``mark`` (the sweep and its children)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if mark.encode() in (d / "environ").read_bytes():
                    found.append(int(d.name))
            except OSError:
                continue
    return found


def _start(out: Path, config: Path, mark: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [*AS_FROM_A_TERMINAL, *evaluate_cmd(out, *ARGS, "--config", str(config))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=str(REPO),
        env={**os.environ, "SG_TEST_MARK": mark, "SWEEP_KEY": KEY},
        **kw,
    )


def _texts(out: Path) -> dict[Path, str]:
    return {f: f.read_text(errors="replace") for f in out.rglob("*") if f.is_file() and f.suffix != ".png"}


def test_every_model_stopped_exits_3_promptly_with_every_child_ended(tmp_path):
    with socket.socket() as s:  # a port nothing listens on: the proxy not running
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    srv = FaultServer().start()
    mark = uuid.uuid4().hex
    try:
        config = models_toml(
            tmp_path / "models.toml",
            {
                "down": {"kind": "openai", "base_url": f"http://127.0.0.1:{dead}/v1", "model": "down"},
                "wrongkey": {
                    "kind": "openai",
                    "base_url": srv.url("echoauth"),
                    "model": "wrongkey",
                    "api_key_env": "SWEEP_KEY",
                },
            },
        )
        out = tmp_path / "out"
        proc = _start(out, config, mark)
        stdout, err = proc.communicate(timeout=BOUND_S)  # a hang fails here
        assert proc.returncode == 3, err[-3000:]
        assert "Traceback" not in err
        assert (
            err.strip()
            .splitlines()[-1]
            .startswith("spatialgap evaluate: error: no run finished, nothing to score")
        )
        assert KEY not in stdout + err and not [f for f, t in _texts(out).items() if KEY in t]
        assert _marked(mark) == []  # the early scorer's worker and every other child ended
    finally:
        srv.stop()


@pytest.mark.parametrize("how", ["sigterm", "ctrl-c-to-the-group"])
def test_sigterm_and_a_terminal_ctrl_c_end_the_sweep_cleanly(tmp_path, how):
    server = FaultServer(latency=0.25).start()
    mark = uuid.uuid4().hex
    proc = None
    try:
        config = models_toml(
            tmp_path / "models.toml",
            {"slow": {"kind": "openai", "base_url": server.url("ok"), "model": "slow", "concurrency": 2}},
        )
        out = tmp_path / "out"
        journal = out / "runs" / "slow" / "geojson-qa" / "predictions.jsonl"
        proc = _start(out, config, mark, start_new_session=True)  # its own group, as in a terminal
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.exists() and len(read_records(journal)[0]) >= 4:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep ended before it could be stopped"
        if how == "sigterm":
            proc.send_signal(signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)  # what a terminal does: every process of the group
        _, err = proc.communicate(timeout=BOUND_S)
        assert proc.returncode == 130, err[-3000:]
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
        assert err.strip().splitlines()[-1].startswith("spatialgap evaluate: interrupted")
        manifest = json.loads((journal.parent / "manifest.json").read_text())
        assert manifest["status"] == "interrupted"
        assert _marked(mark) == []
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        server.stop()


def test_a_surrogate_reply_and_an_echoed_key_lose_nothing_and_leak_nothing(tmp_path):
    good, hostile = FaultServer().start(), HostileServer().start()
    mark = uuid.uuid4().hex
    try:
        config = models_toml(
            tmp_path / "models.toml",
            {
                "good": {"kind": "openai", "base_url": good.url("ok"), "model": "good"},
                "odd": {"kind": "openai", "base_url": hostile.url("surrogate-content"), "model": "odd"},
                "echo": {
                    "kind": "openai",
                    "base_url": hostile.url("echo-key"),
                    "model": "echo",
                    "api_key_env": "SWEEP_KEY",
                },
            },
        )
        out = tmp_path / "out"
        proc = _start(out, config, mark)
        stdout, err = proc.communicate(timeout=BOUND_S)
        assert proc.returncode == 0, err[-3000:]
        rec = json.loads((out / "evaluate.json").read_text())
        assert {r["status"] for r in rec["runs"]} == {"complete"} and len(rec["runs"]) == 3
        assert (out / "report.html").is_file()
        assert KEY not in stdout + err and not [f for f, t in _texts(out).items() if KEY in t]
    finally:
        good.stop()
        hostile.stop()
