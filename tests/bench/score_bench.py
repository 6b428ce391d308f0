"""Scoring speed: samples scored per second for QA and for editing, and the wall time of a whole
`score_runs` over the given runs (target: the 1,400-instance x 3-modality Helsinki set < 10 s).

    .venv/bin/python tests/bench/score_bench.py --bench out/helsinki --run RUN_DIR [--run ...]

Runs outside pytest on purpose: timings belong in a benchmark, not in unit tests."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scoring.score import results, verdicts  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True, type=Path)
    ap.add_argument("--run", required=True, action="append", type=Path)
    args = ap.parse_args(argv)

    manifest, tasks = results.load_benchmark(args.bench)
    sha = manifest["_sha256"]
    per = defaultdict(lambda: {"samples": 0, "seconds": 0.0})
    verdicts._pixel_transform.cache_clear()  # sidecar loads are part of the cost
    for rd in args.run:
        manifest, finals = results._load_run(rd, sha)
        t0 = time.perf_counter()
        rows = results.score_run_rows(args.bench, tasks, rd, manifest, finals)
        dt = time.perf_counter() - t0
        key = f"{manifest['task']}/{manifest['modality']}"
        per[key]["samples"] += len(rows)
        per[key]["seconds"] += dt
    out = {
        k: {
            "samples": v["samples"],
            "seconds": round(v["seconds"], 3),
            "samples_per_s": round(v["samples"] / v["seconds"], 1),
        }
        for k, v in sorted(per.items())
    }
    for task in ("qa", "edit"):
        s = sum(v["samples"] for k, v in per.items() if k.startswith(task + "/"))
        t = sum(v["seconds"] for k, v in per.items() if k.startswith(task + "/"))
        if s:
            out[f"{task} (all modalities)"] = {
                "samples": s,
                "seconds": round(t, 3),
                "samples_per_s": round(s / t, 1),
            }
    verdicts._pixel_transform.cache_clear()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        summary = results.score_runs(args.bench, args.run, Path(tmp) / "res", selfcheck=True)
        wall = time.perf_counter() - t0
    out["score_runs (with selfcheck, summary, files)"] = {
        "samples": summary["samples"],
        "wall_s": round(wall, 2),
    }
    out["target"] = "whole 1,400-instance x 3-modality set < 10 s"
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
