"""Issue 33: build cost against extract size. A real extract (London's City, a shared city)
tiled 1x, 10x and 100x (tile_extract.py: offset ids and coordinates), each built end to end
(`spatialgap build --no-render`, 2 jobs, the default 25 + 25 per relation), beside the time
GDAL itself takes to read the same three layers through its OSM driver in the same run.

Prints one JSON document: per size, wall, CPU (the build and every process it started), peak
RSS (the largest process), how busy the cores were (CPU / (wall x jobs)), the build's serial
phase (extract_s) and the ratio to GDAL's read; then the targets.

    python tests/perf/growth_perf.py [--sizes 1 10 100] [--source FILE] [--cache DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BIN = REPO / ".venv" / "bin"
sys.path.insert(0, str(HERE))
from tile_extract import tile  # noqa: E402

from scoring.formats.benchmark import manifest_with_timing  # noqa: E402

SOURCE = Path(os.environ.get("SPATIALGAP_DATA", "/work/shared/data")) / "osm" / "london_city.osm.pbf"
JOBS = 2

# GDAL's own read of the layers the builder reads: interleaved reading, every feature and its
# geometry fetched, nothing converted (run in a child so its CPU and memory are its own)
GDAL_READ = """
import sys
from osgeo import gdal
from scoring.formats.benchmark import manifest_with_timing
gdal.UseExceptions()
gdal.SetConfigOption("OSM_CONFIG_FILE", sys.argv[2])
ds = gdal.OpenEx(sys.argv[1], gdal.OF_VECTOR | gdal.OF_READONLY, allowed_drivers=["OSM"])
n = 0
while True:
    feat, layer = ds.GetNextFeature(include_layer=True)
    if feat is None:
        break
    if layer.GetName() in ("points", "lines", "multipolygons") and feat.GetGeometryRef() is not None:
        n += 1
print(n)
"""


def timed_command(cmd: list[str]) -> dict:
    """Wall, CPU (user + system of the command and its children) and peak RSS of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {r.stderr.strip().splitlines()[-1:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    # ru_maxrss of RUSAGE_CHILDREN: the largest child so far (sizes run smallest first)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_rss_mb": round(after.ru_maxrss / 1024),
        "out": r.stdout,
    }


def _extract(source: Path, n: int, cache: Path) -> Path:
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    path = cache / f"{source.name.split('.')[0]}-{digest}-x{n}.osm.pbf"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        tile(source, n, path)
    return path


def measure(source: Path, n: int, cache: Path, work: Path) -> dict:
    path = _extract(source, n, cache)
    osmconf = str(REPO / "resources" / "osmconf.ini")
    gdal = timed_command([str(BIN / "python"), "-c", GDAL_READ, str(path), osmconf])
    out = work / f"x{n}"
    build = timed_command(
        [
            *(str(BIN / "spatialgap"), "build", "--osm", str(path), "--out", str(out)),
            *("--jobs", str(JOBS), "--no-render", "--no-progress", "--force"),
        ]
    )
    m = manifest_with_timing(out)
    return {
        "size": f"{n}x",
        "file_mb": round(path.stat().st_size / 1e6, 1),
        "records": int(gdal["out"].strip()),
        "pool_features": sum(m["source"]["pools"].values()),
        "instances": m["counts"]["qa"] + m["counts"]["edit"],
        "gdal_read": {k: gdal[k] for k in ("wall_s", "cpu_s")},
        "build": {k: build[k] for k in ("wall_s", "cpu_s", "peak_rss_mb")},
        "serial_extract_s": m["timing"]["extract_s"],
        "shards_s": m["timing"]["build_s"],
        "cores_busy": round(build["cpu_s"] / (build["wall_s"] * JOBS), 2),
        "wall_over_gdal_wall": round(build["wall_s"] / max(gdal["wall_s"], 1e-3), 2),
        "cpu_over_gdal_cpu": round(build["cpu_s"] / max(gdal["cpu_s"], 1e-3), 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 100])
    ap.add_argument("--source", type=Path, default=SOURCE)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "spatialgap-growth")
    args = ap.parse_args()
    if not args.source.is_file():
        print(json.dumps({"skipped": f"{args.source}: no such file (the shared cities are absent)"}))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="spatialgap-growth-") as d:
        for n in sorted(args.sizes):
            rows.append(measure(args.source, n, args.cache, Path(d)))
    table = [
        "| size | MB | records | pool features | GDAL read wall / CPU s | build wall / CPU s | peak RSS MB "
        "| serial s | cores busy | build / GDAL (wall) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ] + [
        f"| {r['size']} | {r['file_mb']} | {r['records']} | {r['pool_features']} | "
        f"{r['gdal_read']['wall_s']} / {r['gdal_read']['cpu_s']} | {r['build']['wall_s']} / "
        f"{r['build']['cpu_s']} | {r['build']['peak_rss_mb']} | {r['serial_extract_s']} | "
        f"{r['cores_busy']} | {r['wall_over_gdal_wall']} |"
        for r in rows
    ]
    out: dict = {"source": str(args.source), "jobs": JOBS, "sizes": rows, "table": table}
    big = {r["size"]: r for r in rows}
    if "100x" in big:
        r = big["100x"]
        limit = 3 * r["gdal_read"]["wall_s"] + 30
        out["target_100x"] = {
            "limit_wall_s": round(limit, 1),
            "wall_s": r["build"]["wall_s"],
            "holds": r["build"]["wall_s"] <= limit and r["build"]["peak_rss_mb"] <= 4096,
        }
    if "10x" in big and "100x" in big:
        a, b = big["10x"]["build"]["cpu_s"], big["100x"]["build"]["cpu_s"]
        out["growth_10x_to_100x_cpu"] = {"ratio": round(b / a, 2), "at_most_linear": b / a <= 10.0}
    out["load_average_1min"] = round(os.getloadavg()[0], 2)
    print("\n".join(table), file=sys.stderr)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
