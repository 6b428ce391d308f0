"""Ctrl-C stops `spatialgap evaluate` cleanly, and the next run resumes without re-sending a
finished request (the external model's server counts what it receives)."""

import collections
import json
import signal
import subprocess
import sys
import time

from fakeserver import FaultServer

from scoring.formats.rundir import read_records
from tests.conftest import REPO
from tests.evaluate.sweep_helpers import evaluate_cmd, models_toml, run_evaluate

# Ctrl-C reaches a command started from a terminal. A suite started as a background job of a
# non-interactive shell inherits SIGINT ignored (and a command so started rightly keeps ignoring
# it): the sweep under test is started with SIGINT at its default, as a terminal starts it.
AS_FROM_A_TERMINAL = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])",
]
ARGS = ["--agents", "none", "--modalities", "geojson", "--tasks", "qa", "--qa", "1", "--edit", "0"]


def test_ctrl_c_stops_cleanly_and_the_rerun_resumes(tmp_path):
    server = FaultServer(latency=0.25).start()
    try:
        config = models_toml(
            tmp_path / "models.toml",
            {"slow": {"kind": "openai", "base_url": server.url("ok"), "model": "slow", "concurrency": 2}},
        )
        out = tmp_path / "out"
        args = [*ARGS, "--config", str(config)]
        journal = out / "runs" / "slow" / "geojson-qa" / "predictions.jsonl"
        proc = subprocess.Popen(
            [*AS_FROM_A_TERMINAL, *evaluate_cmd(out, *args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=str(REPO),
        )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.exists() and len(read_records(journal)[0]) >= 4:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err[-2000:]
        assert err.strip().splitlines()[-1] == (
            "spatialgap evaluate: interrupted; every finished request is journaled: "
            "re-run the same command to resume"
        )
        assert "Traceback" not in err
        manifest = json.loads((journal.parent / "manifest.json").read_text())
        assert manifest["status"] == "interrupted"
        done = {r["key"] for r in read_records(journal)[0] if r["status"] == "ok"}
        samples = 2 * len((out / "bench" / "qa.jsonl").read_text().splitlines())
        assert 4 <= len(done) < samples

        sent_before = server.requests
        again = run_evaluate(out, *args)
        assert again.returncode == 0, again.stderr[-2000:]
        # exactly the samples not journaled were sent again; nothing finished went twice
        assert server.requests - sent_before == samples - len(done)
        keys = collections.Counter(r["key"] for r in read_records(journal)[0] if r["status"] == "ok")
        assert len(keys) == samples and set(keys.values()) == {1}
    finally:
        server.stop()


def test_a_taken_agent_port_is_said_and_a_resume_it_blocks_is_one_line(tmp_path):
    """Another process holds the built-in agent's stable port: the agent serves on a free port
    and says so, and the runs OUT holds from the stable port are refused in one line."""
    import socket

    from scoring.evaluate.agents import AGENT_PORTS

    out = tmp_path / "out"
    args = ["--agents", "chance", "--modalities", "geojson", "--tasks", "qa", "--qa", "1", "--edit", "0"]
    first = run_evaluate(out, *args)
    assert first.returncode == 0, first.stderr[-2000:]
    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", AGENT_PORTS["chance"]))
        holder.listen()
        again = run_evaluate(out, *args)
    finally:
        holder.close()
    assert again.returncode != 0
    assert f"port {AGENT_PORTS['chance']} is taken" in again.stderr
    assert "Traceback" not in again.stderr and "ExceptionGroup" not in again.stderr
    last = again.stderr.strip().splitlines()[-1]
    assert last.startswith("spatialgap evaluate: error:") and "holds a run with a different" in last
