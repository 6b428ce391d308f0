"""Runner speed against a local fake endpoint (run in a separate process; prints JSON).

    .venv/bin/python tests/perf/runner_perf.py [--n 2000]

perf_throughput(n): requests/s through the whole runner (prompt rendering, HTTP, journal
    fsync) against a zero-latency endpoint. Target >= 300 req/s.
perf_latency(n, latency=0.2, concurrency=32): wall time / ideal (n * latency / concurrency)
    against an endpoint that takes `latency` s per request. Target <= 1.2.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from scoring.runner.config import ModelSpec
from scoring.runner.run import run_benchmark

FAKESERVER = Path(__file__).resolve().parents[1] / "runner" / "fakeserver.py"


@contextmanager
def fake_endpoint(latency: float = 0.0):
    proc = subprocess.Popen(
        [sys.executable, str(FAKESERVER), "--port", "0", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"fake server did not start: {line!r}")
        yield f"http://127.0.0.1:{int(line.split()[1])}/v1"
    finally:
        proc.terminate()
        proc.wait(10)


def synthetic_bench(root: Path, n: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps({"name": "runner-bench", "n": n}))
    with open(root / "qa.jsonl", "w") as fh:
        for i in range(n):
            scene = {
                "type": "FeatureCollection",
                "crs": {"type": "name", "properties": {"name": "EPSG:3067"}},
                "features": [
                    {
                        "type": "Feature",
                        "id": f"F{k}",
                        "properties": {"name": f"f{k}"},
                        "geometry": {"type": "Point", "coordinates": [385000.0 + 10 * k + i, 6672000.0]},
                    }
                    for k in range(8)
                ],
            }
            fh.write(
                json.dumps(
                    {
                        "id": f"bench-{i:06d}",
                        "city": "x",
                        "task": "qa",
                        "relation": "T04",
                        "family": "metric",
                        "scene": scene,
                        "question": f"How far is F0 from F1? #{i}",
                        "answer_type": "distance",
                        "choices": ["1", "2", "3", "4"],
                        "correct_choice": "A",
                        "answerable": {"geojson": True, "image": False, "together": True},
                    }
                )
                + "\n"
            )
    return root


def _timed_run(url: str, n: int, concurrency: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        bench = synthetic_bench(Path(tmp) / "bench", n)
        spec = ModelSpec.from_endpoint(url, "bench", concurrency=concurrency, timeout_s=30)
        t = time.perf_counter()
        s = run_benchmark(bench, spec, "geojson", "qa", ["open"], Path(tmp) / "run", progress=False)
        wall = time.perf_counter() - t
        if s.failed:
            raise RuntimeError(f"{s.failed} requests failed during the benchmark: {s.failures}")
        return wall, s.sent


def perf_throughput(n: int = 2000, concurrency: int = 64) -> dict:
    with fake_endpoint(0.0) as url:
        wall, sent = _timed_run(url, n, concurrency)
    return {"n": n, "concurrency": concurrency, "wall_s": round(wall, 3), "req_per_s": round(sent / wall, 1)}


def perf_latency(n: int = 640, latency: float = 0.2, concurrency: int = 32) -> dict:
    with fake_endpoint(latency) as url:
        wall, sent = _timed_run(url, n, concurrency)
    ideal = n * latency / concurrency
    return {
        "n": n,
        "latency_s": latency,
        "concurrency": concurrency,
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio": round(wall / ideal, 3),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="runner throughput / latency benchmarks")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--latency-n", type=int, default=640)
    a = p.parse_args(argv)
    out = {
        "throughput": {**perf_throughput(a.n), "target": ">= 300 req/s"},
        "latency": {**perf_latency(a.latency_n), "target": "ratio <= 1.2"},
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
