"""`make bench` figure (issue #12): build time of the embedded Helsinki benchmark without maps,
with and without the QA / editing pool split, on all cores. Target: under 15 s on a 2-core
machine. Wall time depends on what else the machine runs, so the CPU seconds of the build and
its workers and the load average are given beside it.

    .venv/bin/python tests/perf/build_split_perf.py [--protocols spatialgap paper]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scoring.formats.benchmark import manifest_with_timing

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"


def build_once(out: Path, split: bool, protocol: str) -> dict:
    cmd = [str(BIN / "spatialgap"), "build", "--out", str(out), "--no-render", "--no-progress"]
    if not split:
        cmd.append("--no-pool-split")
    if protocol != "spatialgap":
        cmd += ["--protocol", protocol]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = manifest_with_timing(out)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "instances": m["counts"]["qa"] + m["counts"]["edit"],
        "shortfalls": len(m["shortfalls"]),
        "constructed": sum(r.get("constructed", 0) for r in m["build_report"]),
        "extract_s": m["timing"]["extract_s"],
        "build_s": m["timing"]["build_s"],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--protocols", nargs="+", default=["spatialgap"])
    args = ap.parse_args()
    out: dict = {"cores": os.cpu_count(), "target_wall_s": 15}
    with tempfile.TemporaryDirectory(prefix="spatialgap-split-") as d:
        for protocol in args.protocols:
            for split in (True, False):
                key = f"{protocol}/{'split' if split else 'no-split'}"
                out[key] = build_once(Path(d) / key.replace("/", "-"), split, protocol)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
