"""A command writes only into a directory it owns: never a benchmark's, never one holding another
tool's manifest, never two processes at once, never through a symlinked journal. Each case runs
the real `spatialgap run` (a subprocess) against a real endpoint on loopback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scoring.formats.rundir import LOCK, PREDICTIONS
from tests.conftest import REPO, VENV_BIN

sys.path.insert(0, str(REPO / "tests" / "runner"))
from runner_helpers import make_bench

from tests.hostile.helpers import BOUND_S, one_line_error, records, run_cmd, spatialgap
from tests.hostile.server import HostileServer


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_out_pointed_at_the_benchmark_is_refused_and_nothing_changes(tmp_path):
    srv = HostileServer().start()
    try:
        bench = make_bench(tmp_path / "bench", n_qa=1, n_edit=0, maps=False)
        before = _files(bench)
        proc = spatialgap(*run_cmd(bench, srv.url("ok"), bench))
        assert proc.returncode == 2
        assert "is a benchmark directory (it holds qa.jsonl)" in one_line_error(proc)
        assert _files(bench) == before and not srv.counts  # nothing written, nothing sent
    finally:
        srv.stop()


def test_out_holding_another_tools_manifest_is_refused(tmp_path):
    srv = HostileServer().start()
    try:
        bench = make_bench(tmp_path / "bench", n_qa=1, n_edit=0, maps=False)
        out = tmp_path / "other"
        out.mkdir()
        (out / "manifest.json").write_text(json.dumps({"name": "someone else's", "version": 3}))
        before = _files(out)
        proc = spatialgap(*run_cmd(bench, srv.url("ok"), out))
        assert proc.returncode == 2
        assert "is not a run manifest" in one_line_error(proc)
        assert _files(out) == before
    finally:
        srv.stop()


def test_a_second_run_into_the_same_out_is_refused_naming_the_first(tmp_path):
    """The first run holds its requests at the endpoint (released by the test, not by time);
    the second, started meanwhile, gets a one-line error with the first's pid and sends nothing."""
    srv = HostileServer().start()
    first = None
    try:
        bench = make_bench(tmp_path / "bench", n_qa=2, n_edit=0, maps=False)
        out = tmp_path / "run"
        first = subprocess.Popen(
            [str(VENV_BIN / "spatialgap"), *run_cmd(bench, srv.url("hold"), out)],
            stderr=subprocess.PIPE,
            text=True,
            cwd=str(REPO),
        )
        assert srv.received.wait(BOUND_S), "the first run sent nothing"
        second = spatialgap(*run_cmd(bench, srv.url("hold"), out))
        assert second.returncode == 2
        assert f"another run (pid {first.pid}) is writing this directory" in one_line_error(second)
        srv.release.set()
        _, err = first.communicate(timeout=BOUND_S)
        assert first.returncode == 0, err[-2000:]
        recs = records(out / PREDICTIONS)
        assert len(recs) == 4 and len({r["key"] for r in recs}) == 4  # each sample once
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["status"] == "complete" and len(manifest["sessions"]) == 1
        assert (out / LOCK).read_text().strip() == str(first.pid)
        assert srv.counts["hold"] == 4  # the second run sent nothing
        # the lock goes with its process: the next run takes it (and resumes: nothing to send)
        assert spatialgap(*run_cmd(bench, srv.url("hold"), out)).returncode == 0
        assert srv.counts["hold"] == 4
    finally:
        if first is not None and first.poll() is None:
            first.kill()
            first.wait()
        srv.stop()


def test_a_symlinked_journal_is_refused_and_its_target_untouched(tmp_path):
    srv = HostileServer().start()
    try:
        bench = make_bench(tmp_path / "bench", n_qa=1, n_edit=0, maps=False)
        out = tmp_path / "run"
        out.mkdir()
        target = tmp_path / "precious.txt"
        target.write_bytes(b"line one\nline two without newline")
        (out / PREDICTIONS).symlink_to(target)
        proc = spatialgap(*run_cmd(bench, srv.url("ok"), out))
        assert proc.returncode == 2
        assert "the journal is a symbolic link" in one_line_error(proc)
        assert target.read_bytes() == b"line one\nline two without newline"
        assert not srv.counts
    finally:
        srv.stop()
