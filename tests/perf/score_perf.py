"""Scoring speed: samples scored per second for QA and for editing, the wall time of a whole
`score_runs` over the given runs (target: the 1,400-instance x 3-modality Helsinki set < 10 s),
and the scoring + reporting time of a multi-city evaluation: the runs scored once per city
(--cities, default 3; the one benchmark stands for each city, its verdicts relabelled) and one
report (HTML + CSV tables, paired tests, figures) over all the results.

    .venv/bin/python tests/perf/score_perf.py --bench out/helsinki --run RUN_DIR [--run ...]

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

from scoring.formats.benchmark import Benchmark
from scoring.formats.rundir import load_run
from scoring.score import report, results, verdicts
from scoring.support.files import read_json, write_atomic, write_json_atomic


def _relabel(results_dir: Path, city: str) -> None:
    """Make a results directory stand for another city (verdicts and summary)."""
    lines = (results_dir / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    for r in rows:
        r["city"] = city
    write_atomic(results_dir / "verdicts.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    summary = read_json(results_dir / "summary.json")
    summary["benchmark"]["city"] = city
    write_json_atomic(results_dir / "summary.json", summary)


def perf_cities(bench: Benchmark, runs: list[Path], n_cities: int, tmp: Path) -> dict:
    """score_runs once per city, then write_report over every city's results."""
    dirs, score_s, models = [], [], set()
    samples = 0
    for i in range(n_cities):
        d = tmp / f"city{i}"
        t0 = time.perf_counter()
        summary = results.score_runs(bench, runs, d, selfcheck=i == 0)
        score_s.append(round(time.perf_counter() - t0, 2))
        samples += summary["samples"]
        models |= {r["model"] for r in summary["runs"]}
        _relabel(d, f"city{i}")
        dirs.append(d)
    t0 = time.perf_counter()
    html = report.write_report(dirs, tmp / "report" / "report.html")
    report_s = time.perf_counter() - t0
    return {
        "cities": n_cities,
        "models": len(models),
        "samples": samples,
        "score_s_per_city": score_s,
        "report_s": round(report_s, 2),
        "total_s": round(sum(score_s) + report_s, 2),
        "report_mb": round(html.stat().st_size / 1e6, 2),
        "csv_files": len(list(html.parent.glob("*.csv"))),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True, type=Path)
    ap.add_argument("--run", required=True, action="append", type=Path)
    ap.add_argument("--cities", type=int, default=3, help="cities of the scoring + reporting figure")
    args = ap.parse_args(argv)

    bench = Benchmark.open(args.bench)
    per = defaultdict(lambda: {"samples": 0, "seconds": 0.0})
    verdicts._pixel_transform.cache_clear()  # sidecar loads are part of the cost
    for rd in args.run:
        manifest, finals = load_run(rd, bench.sha256)
        t0 = time.perf_counter()
        rows = results.score_run_rows(bench, rd, manifest, finals)
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
        summary = results.score_runs(bench, args.run, Path(tmp) / "res", selfcheck=True)
        wall = time.perf_counter() - t0
    out["score_runs (with selfcheck, summary, files)"] = {
        "samples": summary["samples"],
        "wall_s": round(wall, 2),
    }
    with tempfile.TemporaryDirectory() as tmp:
        out[f"score + report, {args.cities} cities x the runs' models"] = perf_cities(
            bench, args.run, args.cities, Path(tmp)
        )
    out["target"] = "whole 1,400-instance x 3-modality set < 10 s"
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
