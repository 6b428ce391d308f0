"""`evaluate --scheduler` over the built-in agents with a worker killed mid-run: the sweep
finishes on the other worker, every sample is journaled once, a re-run changes nothing; then
`score --scheduler` gives the local scorer's bytes."""

from __future__ import annotations

import collections
import json
import subprocess
import time
from pathlib import Path

from scoring.rundir import final_predictions, read_records
from tests.conftest import REPO, VENV_BIN
from tests.execute.cluster import DaskCluster

SPATIALGAP = [str(VENV_BIN / "spatialgap")]
CITIES_TOML = '[cities.helsinki]\nrelations = ["T04", "D02", "M18", "O06"]\n'
KILL_DEADLINE_S = 300.0


def _executing(dask_worker) -> list[str]:
    """(runs on a worker) keys of the tasks it is executing right now."""
    return [str(ts.key) for ts in dask_worker.state.executing]


def _victim(cluster: DaskCluster, out: Path) -> str | None:
    """A worker executing a run whose journal has replies, but not half of them yet."""
    info = cluster.client.scheduler_info()["workers"]
    for addr, keys in cluster.client.run(_executing).items():
        for key in keys:
            if not key.startswith("run-"):
                continue
            city, who, what = key.split("-", 3)[3].split("/")
            journal = out / city / "runs" / who / what / "predictions.jsonl"
            lines = journal.read_bytes().count(b"\n") if journal.is_file() else 0
            if 0 < lines < 20:
                return str(info[addr]["name"])
    return None


def _journals(out: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(out.glob("*/runs/*/*/predictions.jsonl"))}


def test_killed_worker_loses_nothing_and_a_rerun_changes_nothing(tmp_path):
    cluster = DaskCluster(tmp_path / "dask")
    try:
        cities = tmp_path / "cities.toml"
        cities.write_text(CITIES_TOML)
        out = tmp_path / "out"
        cmd = [*SPATIALGAP, "evaluate", "--out", str(out), "--cities", str(cities), "--qa", "6"]
        cmd += ["--edit", "3", "--modalities", "geojson", "--agent-workers", "1", "--no-progress"]
        cmd += ["--scheduler", cluster.address]
        log = (tmp_path / "evaluate.log").open("wb")
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        deadline, victim = time.monotonic() + KILL_DEADLINE_S, None
        while victim is None and proc.poll() is None and time.monotonic() < deadline:
            victim = _victim(cluster, out)
            time.sleep(0.02)  # polling interval of the condition above, not a wait for it
        assert victim is not None, "no run was caught in progress"
        cluster.workers[victim].kill()
        rc = proc.wait(timeout=600)
        log.close()
        text = (tmp_path / "evaluate.log").read_text()
        assert rc == 0, text[-3000:]

        record = json.loads((out / "evaluate.json").read_text())
        assert record["runs"] and all(r["status"] == "complete" and r["failed"] == 0 for r in record["runs"])
        resumed = 0
        for r in record["runs"]:
            run = Path(r["run_dir"])
            records, corrupt, _ = read_records(run / "predictions.jsonl")
            assert corrupt == 0
            # every sample answered once: one "ok" record per request key, one final per sample
            ok = collections.Counter(x["key"] for x in records if x.get("status") == "ok")
            assert ok and max(ok.values()) == 1, run
            assert len(final_predictions(run / "predictions.jsonl")) == r["samples"], run
            sessions = json.loads((run / "manifest.json").read_text())["sessions"]
            resumed += len(sessions) > 1
        assert resumed >= 1, "the killed worker's run was not resumed elsewhere"

        before = _journals(out)
        verdicts = (out / "helsinki" / "results" / "verdicts.jsonl").read_bytes()
        r2 = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
        assert r2.returncode == 0, r2.stderr[-3000:]
        assert _journals(out) == before
        assert (out / "helsinki" / "results" / "verdicts.jsonl").read_bytes() == verdicts
        assert all(r["sent"] == 0 for r in json.loads((out / "evaluate.json").read_text())["runs"])

        # score: each run a shard on the (remaining) worker, same bytes as the local scorer
        runs = [a for r in record["runs"] for a in ("--run", r["run_dir"])]
        bench = str(out / "helsinki" / "bench")
        results = {}
        for name, where in (("local", []), ("dask", ["--scheduler", cluster.address])):
            results[name] = tmp_path / f"results-{name}"
            s = subprocess.run(
                [*SPATIALGAP, "score", "--bench", bench, *runs, "--out", str(results[name]), *where],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert s.returncode in (0, 1) and "Traceback" not in s.stderr, s.stderr[-3000:]
        local, remote = results["local"], results["dask"]
        assert (local / "verdicts.jsonl").read_bytes() == (remote / "verdicts.jsonl").read_bytes()
        assert (local / "summary.csv").read_bytes() == (remote / "summary.csv").read_bytes()
        sl, sr = (json.loads((d / "summary.json").read_text()) for d in (local, remote))
        sl.pop("created_at"), sr.pop("created_at")
        assert sl == sr
    finally:
        cluster.close()
