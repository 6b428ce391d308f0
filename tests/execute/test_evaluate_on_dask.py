"""`evaluate --scheduler` over the built-in agents with a worker killed mid-run: the sweep
finishes on the other worker, every sample is journaled once, a re-run changes nothing; then
`score --scheduler` gives the local scorer's bytes."""

from __future__ import annotations

import collections
import json
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from scoring.formats.rundir import final_predictions, read_records
from tests.conftest import REPO, VENV_BIN
from tests.execute.cluster import DaskCluster

SPATIALGAP = [str(VENV_BIN / "spatialgap")]
CITIES_TOML = '[cities.helsinki]\nrelations = ["T04", "D02", "M18", "O06"]\n'
OPEN_REQUESTS = 5  # answered at once; the next one waits at the gate until the worker is killed
WAIT_S = 300.0


class GatedModel(ThreadingHTTPServer):
    """A chat-completions endpoint on loopback that answers the first OPEN_REQUESTS requests and
    holds every later one until the gate opens: the test then knows a run is mid-way."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _GatedHandler)
        self.gate = threading.Event()
        self.held = threading.Event()
        self.count = 0
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _GatedHandler(BaseHTTPRequestHandler):
    server: GatedModel

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 -- http.server names
        self._send({"object": "list", "data": [{"id": "gated", "object": "model"}]})

    def do_POST(self) -> None:  # noqa: N802 -- http.server names
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            self.server.count += 1
            held = self.server.count > OPEN_REQUESTS
        if held and not self.server.gate.is_set():
            self.server.held.set()
            self.server.gate.wait(WAIT_S)
        message = {"role": "assistant", "content": "Answer: F1"}
        try:
            self._send(
                {
                    "id": "gated",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "gated",
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            )
        except OSError:  # the killed worker's connection is gone
            pass


def _executing(dask_worker) -> list[str]:
    """(runs on a worker) keys of the tasks it is executing right now."""
    return [str(ts.key) for ts in dask_worker.state.executing]


def _victim(cluster: DaskCluster, out: Path) -> str | None:
    """A worker executing a run whose journal already has replies (its next request is held)."""
    info = cluster.client.scheduler_info()["workers"]
    for addr, keys in cluster.client.run(_executing).items():
        for key in keys:
            if not key.startswith("run-"):
                continue
            city, who, what = key.split("-", 3)[3].split("/")
            journal = out / city / "runs" / who / what / "predictions.jsonl"
            if journal.is_file() and journal.read_bytes().count(b"\n") > 0:
                return str(info[addr]["name"])
    return None


def _journals(out: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(out.glob("*/runs/*/*/predictions.jsonl"))}


def test_killed_worker_loses_nothing_and_a_rerun_changes_nothing(tmp_path):
    cluster = DaskCluster(tmp_path / "dask")
    model = GatedModel()
    try:
        cities = tmp_path / "cities.toml"
        cities.write_text(CITIES_TOML)
        config = tmp_path / "models.toml"
        config.write_text(
            f'[models.gated]\nkind = "openai"\nbase_url = "{model.base_url}"\nmodel = "gated"\n'
            'modalities = ["geojson"]\nconcurrency = 1\nomit = ["seed"]\n'
        )
        out = tmp_path / "out"
        cmd = [*SPATIALGAP, "evaluate", "--out", str(out), "--cities", str(cities), "--qa", "6"]
        cmd += ["--edit", "3", "--modalities", "geojson", "--config", str(config), "--no-progress"]
        cmd += ["--scheduler", cluster.address]
        log = (tmp_path / "evaluate.log").open("wb")
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        assert model.held.wait(WAIT_S), "no request reached the gate"
        # Nothing moves while the request is held: the run that journaled replies is still executing.
        deadline, victim = time.monotonic() + WAIT_S, None
        while victim is None and proc.poll() is None and time.monotonic() < deadline:
            victim = _victim(cluster, out)
            time.sleep(0.02)  # polling interval of the condition above, not a wait for it
        assert victim is not None, "no run was caught in progress"
        cluster.workers[victim].kill()
        cluster.workers[victim].wait(timeout=60)
        model.gate.set()
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
        model.gate.set()
        model.shutdown()
        cluster.close()
