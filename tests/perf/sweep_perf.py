"""The overhead of `spatialgap evaluate`'s combined sweep over the model time (prints JSON).

Three cities (the embedded Helsinki extract under three seeds, so no development data is
needed) x three external models, each a local server answering after a fixed latency with a
fixed concurrency. The ideal is the slowest model's requests at its concurrency
(requests x latency / concurrency): the models run side by side, so a perfect sweep takes as long
as its slowest model. The ratio is the measured run phase over that ideal (1.0 = no overhead).

    .venv/bin/python tests/perf/sweep_perf.py [--latency 0.05] [--concurrency 4] [--qa 2 --edit 2]
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

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "runner"))

from fakeserver import FaultServer  # noqa: E402

MODELS = ("alpha", "beta", "gamma")
SEEDS = {"helsinki-s0": 0, "helsinki-s1": 1, "helsinki-s2": 2}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.05, help="seconds each model takes per request")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--qa", type=int, default=2)
    ap.add_argument("--edit", type=int, default=2)
    ap.add_argument("--out", type=Path, help="keep the sweep here (default: a temporary directory)")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sweep-perf-") as tmp:
        root = a.out or Path(tmp)
        result = measure(root, a.latency, a.concurrency, a.qa, a.edit)
    print(json.dumps(result, indent=2))
    return 0


def measure(root: Path, latency: float, concurrency: int, n_qa: int, n_edit: int) -> dict:
    root.mkdir(parents=True, exist_ok=True)
    cities = root / "cities.toml"
    cities.write_text("".join(f"[cities.{n}]\nseed = {s}\n\n" for n, s in SEEDS.items()))
    servers = {m: FaultServer(latency=latency).start() for m in MODELS}
    try:
        config = root / "models.toml"
        config.write_text(
            "".join(
                f'[models.{m}]\nkind = "openai"\nbase_url = "{srv.url("ok")}"\nmodel = "{m}"\n'
                f'modalities = ["geojson"]\nconcurrency = {concurrency}\n\n'
                for m, srv in servers.items()
            )
        )
        out = root / "out"
        cmd = [str(REPO / ".venv" / "bin" / "spatialgap"), "evaluate", "--out", str(out), "--no-progress"]
        cmd += ["--cities", str(cities), "--config", str(config), "--qa", str(n_qa), "--edit", str(n_edit)]
        # The benchmarks are built untimed (the sweep reuses them); the runs start from nothing.
        for city, seed in SEEDS.items():
            build = [str(REPO / ".venv" / "bin" / "spatialgap"), "build", "--out", str(out / city / "bench")]
            build += ["--city", city, "--seed", str(seed), "--qa", str(n_qa), "--edit", str(n_edit)]
            subprocess.run(
                [*build, "--no-render", "--no-progress", "--force"], check=True, capture_output=True
            )
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=str(REPO), env=dict(os.environ))
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise SystemExit(f"evaluate failed ({p.returncode}): {p.stderr[-2000:]}")
        rec = json.loads((out / "evaluate.json").read_text())
        requests = {m: srv.requests for m, srv in servers.items()}
    finally:
        for srv in servers.values():
            srv.stop()
    ideal = max(requests.values()) * latency / concurrency
    runs_s = rec["seconds"]["runs"]
    return {
        "cities": len(SEEDS),
        "models": len(MODELS),
        "latency_s": latency,
        "concurrency": concurrency,
        "requests": requests,
        "ideal_s": round(ideal, 2),
        "runs_s": runs_s,
        "overhead_ratio": round(runs_s / ideal, 3) if ideal else None,
        "command_wall_s": round(wall, 2),
        "command_seconds": rec["seconds"],
    }


if __name__ == "__main__":
    sys.exit(main())
