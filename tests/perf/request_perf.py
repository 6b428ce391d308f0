"""Cost of building model requests: image modality vs GeoJSON, per request, on the same samples.

    .venv/bin/python tests/perf/request_perf.py --bench DIR [--samples N] [--rounds R]

For each sample (instance x form, in the order a run sends them) it times what the runner does
before a request leaves the process (read the map once per run, hash it, build the messages,
build the body, serialise it to JSON bytes) and what a built-in agent does on receipt (parse
the JSON, then the `chance` agent's reply: read the prompt back, seed its RNG from the whole
request, map included, answer; and the reply's usage count). Prints JSON: milliseconds per
request for each modality, the image / GeoJSON ratio and the overhead per request, with and
without the data-URL cache. Times are this process's CPU time: on a shared machine they hold
where wall-clock stages would count the waits for a core.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from scoring.formats.benchmark import Benchmark
from scoring.runner import prompts
from scoring.runner.agents.registry import get_agent
from scoring.runner.agents.server import _usage
from scoring.runner.client import build_request
from scoring.runner.config import ModelSpec
from scoring.runner.transport import encode_body
from scoring.support.files import sha256_hex
from scoring.vocab import Modality, Task, forms_of


def _samples(bench: Benchmark, n: int) -> list[tuple[dict, str]]:
    out = []
    for inst in bench.all_instances():
        for form in forms_of(Task(inst["task"])):
            out.append((inst, str(form)))
    return out[:n]


def time_run(
    bench: Benchmark, samples: list[tuple[dict, str]], modality: str, cache: bool = True
) -> dict[str, float]:
    """Seconds spent per stage over one run's samples (maps read once per run, as the runner
    does); without `cache`, every request encodes its map's data URL again."""
    prompts.map_data_url.cache_clear()
    cached = prompts.map_data_url
    if not cache:
        prompts.map_data_url = cached.__wrapped__  # type: ignore[assignment]
    try:
        return _time_run(bench, samples, modality)
    finally:
        prompts.map_data_url = cached


def _time_run(bench: Benchmark, samples: list[tuple[dict, str]], modality: str) -> dict[str, float]:
    spec = ModelSpec(name="perf", kind="openai", base_url="http://127.0.0.1:1/v1", model="perf")
    t = dict.fromkeys(("read_map", "hash_map", "messages", "body", "json", "agent_reply"), 0.0)
    chance = get_agent("chance")
    images: dict[str, bytes] = {}
    sent = 0
    for inst, form in samples:
        t0 = time.process_time()
        img = None
        if Modality(modality).has_image:
            img = images.get(inst["id"])
            if img is None:
                img = images[inst["id"]] = (bench.maps_dir / f"{inst['id']}.png").read_bytes()
        t1 = time.process_time()
        if img is not None:
            sha256_hex(img)
        t2 = time.process_time()
        msgs = prompts.build_messages(inst, modality, form, img)
        t3 = time.process_time()
        _, _, body = build_request(spec, msgs, None)
        t4 = time.process_time()
        data = encode_body(body)
        t5 = time.process_time()
        received = json.loads(data)["messages"]
        _usage(chance(received), received)
        t6 = time.process_time()
        sent += len(data)
        for k, a, b in (
            ("read_map", t0, t1),
            ("hash_map", t1, t2),
            ("messages", t2, t3),
            ("body", t3, t4),
            ("json", t4, t5),
            ("agent_reply", t5, t6),
        ):
            t[k] += b - a
    t["bytes_sent"] = float(sent)
    return t


def measure(bench_dir: str | Path, n: int = 200, rounds: int = 3) -> dict[str, Any]:
    bench = Benchmark.open(bench_dir)
    samples = _samples(bench, n)
    per: dict[str, list[dict[str, float]]] = {"geojson": [], "image": [], "image_without_cache": []}
    for _ in range(rounds):  # interleaved, so a busy machine slows all alike
        for name in per:
            modality = name.split("_")[0]
            per[name].append(time_run(bench, samples, modality, cache=name != "image_without_cache"))
    out: dict[str, Any] = {"samples": len(samples), "rounds": rounds}
    for name, runs in per.items():
        stages = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k != "bytes_sent"}
        total = sum(stages.values())
        out[name] = {
            "ms_per_request": round(1000 * total / len(samples), 3),
            "stages_ms_per_request": {k: round(1000 * v / len(samples), 3) for k, v in stages.items()},
            "client_ms_per_request": round(1000 * (total - stages["agent_reply"]) / len(samples), 3),
            "kib_per_request": round(runs[0]["bytes_sent"] / len(samples) / 1024, 1),
        }
    g, i, u = out["geojson"], out["image"], out["image_without_cache"]
    out["summary"] = {
        "image_over_geojson": round(i["ms_per_request"] / g["ms_per_request"], 2),
        "image_overhead_ms_per_request": round(i["ms_per_request"] - g["ms_per_request"], 3),
        "image_client_overhead_ms_per_request": round(
            i["client_ms_per_request"] - g["client_ms_per_request"], 3
        ),
        "image_without_cache_over_geojson": round(u["ms_per_request"] / g["ms_per_request"], 2),
        "data_url_cache_saves_ms_per_request": round(u["ms_per_request"] - i["ms_per_request"], 3),
    }
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", required=True, type=Path)
    p.add_argument("--samples", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args(argv)
    print(json.dumps(measure(a.bench, a.samples, a.rounds), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
