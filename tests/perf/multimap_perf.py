"""Render cost of the cross-map modalities against a single map (issue 15), on the same instances.

    .venv/bin/python tests/perf/multimap_perf.py --bench DIR [--samples K]

One process, one core, the production code (`render_map` + `write_map_files`, what the workers of
`spatialgap render` run), over K instances spread evenly over the benchmark:

- single: the image modality's map of each instance;
- multi: the two maps of its image-multi set (detail + overview);
- context: its image-context set. A distractor map is drawn once per source instance and shared by
  every set that uses it, so over a whole benchmark a set costs (distinct distractor maps /
  instances) distractor renders (`amortized`, planned over the whole benchmark); K sets drawn on
  their own cost their full distractor count (`unshared`). The relevant map is the image
  modality's own map: no extra drawing.

Prints JSON: seconds per instance and the ratios to a single map (target: multi about 2x, the
maps it draws; context amortized about 1x), and the PNG bytes a request carries in each setting.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from scoring.formats.benchmark import Benchmark
from scoring.render.context import ContextIndex
from scoring.render.multi import draw_multi, plan_sets
from scoring.render.renderer import render_map
from scoring.render.sidecar.records import write_map_files
from scoring.render.style import load_style


def _draw(instance: dict, context: ContextIndex, style: dict, out: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    png, record = render_map(instance, context, style)
    write_map_files(out, png, record)
    return time.perf_counter() - t0, len(png)


def measure(bench_dir: Path, samples: int) -> dict:
    bench = Benchmark.open(bench_dir)
    every = bench.all_instances()
    step = max(1, len(every) // samples)
    picked = every[::step][:samples]
    context = ContextIndex.from_file(bench.context_path, bench.epsg)
    style = load_style()
    single, multi, distractor = [], [], []
    single_bytes, multi_bytes, distractor_bytes = [], [], []
    with tempfile.TemporaryDirectory(prefix="sg-multimap-bench-") as tmp:
        out = Path(tmp)
        _draw(picked[0], context, style, out)  # warm-up: fonts, caches
        for inst in picked:
            s, b = _draw(inst, context, style, out)
            single.append(s)
            single_bytes.append(b)
            t0 = time.perf_counter()
            drawn = draw_multi(inst, context, style)
            for png, record in drawn:
                write_map_files(out, png, record)
            multi.append(time.perf_counter() - t0)
            multi_bytes.append(sum(len(png) for png, _ in drawn))
        t0 = time.perf_counter()
        units, records = plan_sets(bench, ["image-context"], [i["id"] for i in picked], style)
        plan_s = (time.perf_counter() - t0) / len(picked)
        for map_id, _, inst, st in units:
            if map_id.endswith(".distractor"):
                s, b = _draw(inst, context, st, out)
                distractor.append(s)
                distractor_bytes.append(b)
    # over the whole benchmark: how many distinct distractor maps its sets share
    t0 = time.perf_counter()
    all_units, all_records = plan_sets(bench, ["image-context"], None, style)
    plan_all_s = time.perf_counter() - t0
    distinct = sum(1 for u in all_units if u[0].endswith(".distractor"))
    per_set = statistics.mean(len(r["maps"]) - 1 for r in all_records["image-context"])
    t_single = statistics.mean(single)
    t_distractor = statistics.mean(distractor) if distractor else t_single
    amortized = distinct / len(every) * t_distractor + plan_all_s / len(every)
    unshared = per_set * t_distractor + plan_s
    return {
        "instances_sampled": len(picked),
        "benchmark_instances": len(every),
        "single_map_s": round(t_single, 4),
        "multi_s_per_instance": round(statistics.mean(multi), 4),
        "multi_to_single": round(statistics.mean(multi) / t_single, 2),
        "context_distractors_per_set": round(per_set, 2),
        "context_distinct_distractor_maps": distinct,
        "context_amortized_s_per_instance": round(amortized, 4),
        "context_amortized_to_single": round(amortized / t_single, 2),
        "context_unshared_s_per_instance": round(unshared, 4),
        "context_unshared_to_single": round(unshared / t_single, 2),
        "request_png_bytes_to_single": {
            "multi": round(statistics.mean(multi_bytes) / statistics.mean(single_bytes), 2),
            "context": round(
                (
                    1
                    + per_set
                    * statistics.mean(distractor_bytes or single_bytes)
                    / statistics.mean(single_bytes)
                ),
                2,
            ),
        },
        "jobs": 1,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True, type=Path)
    ap.add_argument("--samples", type=int, default=12)
    args = ap.parse_args()
    print(json.dumps(measure(args.bench, max(1, args.samples)), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
