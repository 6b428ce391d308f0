"""Issue 13: build + render of the six shared cities, local serial / local parallel /
`--dask-workers N`: times and ratios, the scheduler's overhead per task, the per-shard costs, and
from them the projection for 100 cities x 1,400 instances x 3 modalities on 1, 8 and 64 workers.

    python tests/perf/dask_perf.py [--qa 1] [--edit 1] [--workers 2]

Prints one JSON document. Skips (with the reason) when ../shared/data/osm is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scoring.formats.benchmark import manifest_with_timing

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / ".venv" / "bin"
OSM = REPO.parent / "shared" / "data" / "osm"
CITIES = [
    "stockholm_norrmalm.osm",
    "hongkong_tsimshatsui.osm",
    "nairobi_kibera.osm",
    "paris_marais_roads.osm.pbf",
    "london_city.osm.pbf",
    "baltimore.osm.pbf",
]
NOOP_TASKS = 400

# The projection's job: 100 cities x 1,400 instances (25 + 25 per relation x 28), each drawn once
# (the image and both modalities share the map), each asked in 3 modalities.
P_CITIES, P_INSTANCES, P_MODALITIES = 100, 1400, 3


def _noop(item: int, shared: object) -> int:
    return item


def build_all(mode: list[str], tmp: Path, qa: int, edit: int) -> dict:
    """Every city built and rendered with one executor choice; wall time and the manifests."""
    t0 = time.perf_counter()
    per_city = {}
    for name in CITIES:
        out = tmp / name.split(".")[0]
        t = time.perf_counter()
        cmd = [str(BIN / "spatialgap"), "build", "--osm", str(OSM / name), "--out", str(out)]
        cmd += ["--qa", str(qa), "--edit", str(edit), "--no-progress", "--no-render", "--force", *mode]
        subprocess.run(cmd, check=True, capture_output=True, cwd=REPO)
        t_build = time.perf_counter() - t
        t = time.perf_counter()
        r = subprocess.run(
            [str(BIN / "spatialgap"), "render", "--bench", str(out), "--no-progress", *mode],
            check=True,
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        t_render = time.perf_counter() - t
        maps_per_s = float(r.stdout.rsplit("(", 1)[1].split(" maps/s")[0])
        m = manifest_with_timing(out)
        maps = len(list((out / "maps").glob("*.png")))
        per_city[name] = {
            "build_wall_s": round(t_build, 2),
            "render_wall_s": round(t_render, 2),
            "instances": m["counts"]["qa"] + m["counts"]["edit"],
            "shards": len(m["build_report"]),
            "extract_s": m["timing"]["extract_s"],
            "build_s": m["timing"]["build_s"],
            "shard_cpu_s": round(sum(r["seconds"] for r in m["build_report"]), 2),
            "maps": maps,
            "render_loop_s": round(maps / maps_per_s, 2),  # without the command's start-up
        }
    return {"wall_s": round(time.perf_counter() - t0, 2), "cities": per_city}


def scheduler_overhead(workers: int) -> dict:
    """Seconds per task of an empty shard: Dask (a LocalCluster) against the local pool."""
    from scoring.execute import LocalExecutor
    from scoring.execute.on_dask import DaskExecutor

    t = time.perf_counter()
    ex = DaskExecutor(n_workers=workers)
    start = time.perf_counter() - t
    try:
        list(ex.map(_noop, range(20)))  # warm: workers import the function's module
        t = time.perf_counter()
        list(ex.map(_noop, range(NOOP_TASKS), shared={"x": 1}))
        dask_task = (time.perf_counter() - t) / NOOP_TASKS
    finally:
        ex.close()
    t = time.perf_counter()
    list(LocalExecutor(workers).map(_noop, range(NOOP_TASKS), shared={"x": 1}))
    local_task = (time.perf_counter() - t) / NOOP_TASKS
    return {
        "cluster_start_s": round(start, 2),
        "dask_s_per_task": round(dask_task, 5),
        "local_pool_s_per_task": round(local_task, 5),
    }


def client_write_cost(bench: Path) -> float:
    """Seconds the client spends writing one map's files (PNG, sidecar, world file, aux)."""
    from scoring.render.sidecar.records import write_map_files

    pngs = sorted((bench / "maps").glob("*.png"))[:40]
    maps = [(p.read_bytes(), json.loads(p.with_suffix(".json").read_text())) for p in pngs]
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        for png, record in maps:
            write_map_files(Path(d), png, record)
        return (time.perf_counter() - t) / max(1, len(maps))


def projection(serial: dict, overhead: dict, write_s: float) -> dict:
    """Hours of build + render for the projection's job on 1, 8, 64 workers, from the serial
    run's per-instance costs; what the client does alone (extract, writing) does not shrink."""
    cities = serial["cities"].values()
    n = sum(c["instances"] for c in cities)
    build_per_inst = sum(c["shard_cpu_s"] for c in cities) / n
    render_per_map = sum(c["render_loop_s"] for c in cities) / max(1, sum(c["maps"] for c in cities))
    extract_per_city = sum(c["extract_s"] for c in cities) / len(serial["cities"])
    shards_per_city = 56  # 28 relations x (qa, edit)
    batches_per_city = P_INSTANCES / 8  # render batches of up to 8 maps
    tasks = P_CITIES * (shards_per_city + batches_per_city)
    work = P_CITIES * P_INSTANCES * (build_per_inst + render_per_map)
    client = P_CITIES * (extract_per_city + P_INSTANCES * write_s) + tasks * overhead["dask_s_per_task"]
    hours = {w: round((work / w + client) / 3600, 2) for w in (1, 8, 64)}
    return {
        "job": f"{P_CITIES} cities x {P_INSTANCES} instances x {P_MODALITIES} modalities (maps drawn once)",
        "per_instance_build_s": round(build_per_inst, 4),
        "per_map_render_s": round(render_per_map, 4),
        "per_city_extract_s_on_client": round(extract_per_city, 2),
        "per_map_client_write_s": round(write_s, 5),
        "tasks": int(tasks),
        "client_side_hours": round(client / 3600, 2),
        "hours_by_workers": hours,
        "samples_to_send": P_CITIES * P_INSTANCES * P_MODALITIES * 3 // 2,  # QA open + MCQ, edit once
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--qa", type=int, default=1)
    ap.add_argument("--edit", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    if not OSM.is_dir():
        print(json.dumps({"skipped": f"{OSM} is absent (development data)"}))
        return 0
    w = str(a.workers)
    modes = {"local_serial": ["--jobs", "1"], "local_parallel": ["--jobs", w], "dask": ["--dask-workers", w]}
    out: dict = {
        "cities": len(CITIES),
        "qa_per_relation": a.qa,
        "edit_per_relation": a.edit,
        "workers": a.workers,
    }
    with tempfile.TemporaryDirectory(prefix="spatialgap-dask-perf-") as d:
        runs = {k: build_all(m, Path(d) / k, a.qa, a.edit) for k, m in modes.items()}
        out["wall_s"] = {k: r["wall_s"] for k, r in runs.items()}
        serial = runs["local_serial"]["wall_s"]
        out["speedup_vs_serial"] = {k: round(serial / r["wall_s"], 2) for k, r in runs.items()}
        out["dask_vs_local_parallel"] = round(runs["dask"]["wall_s"] / runs["local_parallel"]["wall_s"], 2)
        out["per_city_serial"] = runs["local_serial"]["cities"]
        out["overhead"] = scheduler_overhead(a.workers)
        write_s = client_write_cost(Path(d) / "local_serial" / CITIES[0].split(".")[0])
        out["projection"] = projection(runs["local_serial"], out["overhead"], write_s)
    out["cores"] = os.cpu_count()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
