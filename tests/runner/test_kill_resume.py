"""`run` as a real subprocess: SIGKILL mid-run, resume, prove nothing lost or duplicated."""

import collections
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fakeserver import FaultServer
from runner_helpers import FAKE_KEY, make_bench

from scoring.formats.rundir import read_records

ROOT = Path(__file__).resolve().parents[2]


def cli(bench, url, out):
    env = {**os.environ, "SG_TEST_KEY": FAKE_KEY, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "scoring",
        "run",
        "--bench",
        str(bench),
        "--endpoint",
        url,
        "--model",
        "fake-model",
        "--api-key-env",
        "SG_TEST_KEY",
        "--modality",
        "geojson",
        "--task",
        "qa",
        "--out",
        str(out),
        "--no-progress",
        "--concurrency",
        "4",
    ]
    return subprocess.Popen(cmd, env=env, cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_sigkill_then_resume(tmp_path):
    srv = FaultServer(latency=0.02).start()
    try:
        bench = make_bench(tmp_path / "bench", n_qa=60, n_edit=0, maps=False)
        out = tmp_path / "run"
        journal = out / "predictions.jsonl"
        proc = cli(bench, srv.url("ok"), out)
        deadline = time.time() + 20
        while time.time() < deadline:
            if journal.exists() and journal.read_bytes().count(b"\n") >= 20:
                break
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert proc.returncode == -signal.SIGKILL
        n_before = len(read_records(journal)[0])
        assert 20 <= n_before < 120, n_before
        with open(journal, "ab") as fh:  # as if the kill had landed mid-write
            fh.write(b'{"key": "torn", "status": "ok", "sam')
        sent_before = srv.requests

        proc = cli(bench, srv.url("ok"), out)
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, stderr.decode()
        recs = read_records(journal)[0]
        samples = collections.Counter(r["sample"] for r in recs if r["status"] == "ok" and r["final"])
        expected = {f"helsinki-qa-{i:04d}|{f}" for i in range(60) for f in ("open", "mcq")}
        assert set(samples) == expected  # none lost
        assert all(c == 1 for c in samples.values())  # none duplicated
        keys = collections.Counter(r["key"] for r in recs)
        assert all(c == 1 for c in keys.values())
        # only what was missing was re-sent (plus at most the requests in flight at the kill)
        resent = srv.requests - sent_before
        assert resent == 120 - n_before
        assert all(json.loads(line) for line in journal.read_bytes().splitlines())
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["status"] == "complete" and len(manifest["sessions"]) == 2
        assert FAKE_KEY.encode() not in b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
        assert FAKE_KEY.encode() not in stdout + stderr
    finally:
        srv.stop()
