"""Fuzz benchmark of reply reading and per-sample scoring (issue 11).

Builds a small Helsinki benchmark (every relation, QA and edit), then scores at least 100,000
generated and mutated replies -- text, JSON, geometry, absurd numbers, NaN/inf, huge strings --
over every answer type and edit instance, through the scorer's entry points and the runner's retry
decision. Prints JSON figures: count, exceptions (escaping one sample's scoring), internal errors
(verdicts naming a caught exception), and per-sample latency after warm-up.

    .venv/bin/python tests/perf/fuzz_replies.py [--count N] [--seed S] [--bench DIR]
"""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import math
import random
import shutil
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scoring.answers import read_edit_reply
from scoring.score.verdicts import INTERNAL_ERROR, score_edit, score_qa

WARMUP = 2_000
LIMIT_MS = 50.0
ABSURD = [float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 1e-320, 0.0, -0.0, 10**30, 2**63]
JUNK = [
    "",
    " ",
    "\x00",
    "\ud800",
    "{",
    "}",
    "[",
    "]",
    '"',
    "\\",
    "<think>",
    "</think>",
    "```",
    "**",
    "°",
    "m²",
    "−",
]


def build(bench: Path | None) -> tuple[list[dict], list[dict]]:
    if bench is None:
        from scoring.build.builder import build_benchmark

        bench = Path(tempfile.mkdtemp(prefix="fuzz-bench-")) / "helsinki"
        atexit.register(shutil.rmtree, bench.parent, True)
        build_benchmark(None, bench, seed=0, n_qa=2, n_edit=1, jobs=1, progress=False)
    read = lambda name: [json.loads(x) for x in (bench / name).read_text().splitlines()]  # noqa: E731
    return read("qa.jsonl"), read("edit.jsonl")


def _number_text(rng: random.Random) -> str:
    v = rng.choice(ABSURD + [rng.uniform(-1e6, 1e6), rng.randint(-(10**12), 10**12)])
    return rng.choice(["{}", "{} m", "{} km", "{}°", "{} m²", "N{}W", "~{} metres", "{} per km²"]).format(
        v if not isinstance(v, float) or math.isfinite(v) else str(v)
    )


def qa_reply(rng: random.Random, inst: dict) -> str:
    answer = inst.get("answer")
    base = ", ".join(map(str, answer)) if isinstance(answer, list) else str(answer)
    choices = inst.get("choices") or ["A", "B"]
    pick = rng.random()
    if pick < 0.25:
        text = rng.choice(
            ["Answer: {}", "The answer is {}.", "{}", "<answer>{}</answer>", "\\boxed{{{}}}"]
        ).format(base)
    elif pick < 0.4:
        text = json.dumps(
            {
                rng.choice(["answer", "final_answer", "choice", "value", "x"]): rng.choice(
                    [base, 1e308, None, [base, base]]
                )
            }
        )
    elif pick < 0.55:
        text = _number_text(rng) + rng.choice(
            ["", " or " + _number_text(rng), " (not 3)", "\nFinal answer: " + _number_text(rng)]
        )
    elif pick < 0.65:
        text = (
            "\n".join(f"{chr(65 + i)}) {c}" for i, c in enumerate(choices))
            + "\nAnswer: "
            + rng.choice("ABCDEab")
        )
    elif pick < 0.75:
        text = "".join(
            rng.choice(JUNK + list("abcNSEWF0123456789 .,:;-\n")) for _ in range(rng.randint(0, 400))
        )
    elif pick < 0.8:
        text = rng.choice(JUNK + [base, "wait, "]) * rng.randint(1_000, 40_000)
    else:
        text = "<think>" + " wait, maybe north? " * rng.randint(0, 50) + rng.choice(["</think>", ""]) + base
    return _mutate(rng, text)


def _mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(0, 3)):
        if not text:
            break
        i = rng.randrange(len(text))
        op = rng.random()
        if op < 0.4:
            text = text[:i] + rng.choice(JUNK + list("0123456789-.,")) + text[i:]
        elif op < 0.7:
            text = text[:i] + text[i + 1 :]
        else:
            text = text[:i] + text[i:][: rng.randint(0, 50)] * 2 + text[i:]
    return text


def _value(rng: random.Random, v: object) -> object:
    if isinstance(v, (int, float)) and not isinstance(v, bool) and rng.random() < 0.5:
        return rng.choice(ABSURD + ["12", None, True, [1, 2], {"x": 1}])
    return v


def edit_reply(rng: random.Random, inst: dict) -> str:
    ops = list((inst.get("reference_edit") or {}).get("operations") or [])
    pick = rng.random()
    if pick < 0.45:
        mutated = [{k: _value(rng, v) for k, v in op.items() if rng.random() > 0.1} for op in ops]
        if rng.random() < 0.2:
            mutated.append({"op": rng.choice(["translate", "rotate", "scale", "set_attribute", "explode"])})
        obj: object = {"operations": mutated * rng.choice([1, 1, 1, 30])}
    elif pick < 0.75:
        f0 = next(
            (f for f in inst["scene"]["features"] if (f.get("id") or f["properties"].get("id")) == "F0"), None
        )
        geom = f0["geometry"] if f0 else {"type": "Point", "coordinates": [0, 0]}
        kind = rng.random()
        if kind < 0.3:
            geom = {"type": "Point", "coordinates": [_value(rng, 385000.0), _value(rng, 6672000.0)]}
        elif kind < 0.5:
            geom = {
                "type": "GeometryCollection",
                "geometries": [{"type": "GeometryCollection", "geometries": [geom]}],
            }
        elif kind < 0.7:
            geom = {
                "type": rng.choice(["Polygon", "LineString", "MultiPolygon", "Blob"]),
                "coordinates": geom.get("coordinates"),
            }
        elif kind < 0.8:
            geom = {
                "type": "LineString",
                "coordinates": [[rng.uniform(-1e7, 1e7), rng.uniform(-1e7, 1e7)] for _ in range(2000)],
            }
        obj = {rng.choice(["geometry", "geometry", "pixel_geometry"]): geom}
    else:
        return qa_reply(rng, {"answer": "translate F0", "choices": []})
    text = json.dumps(obj, allow_nan=True, default=str)
    wrap = rng.choice(["{}", "```json\n{}\n```", "<think>{{maybe}}</think>{}", "Here: {} thanks", "{}{}"])
    return _mutate(rng, wrap.replace("{}", text, 2) if wrap == "{}{}" else wrap.format(text))


def _time_once(call) -> float:
    t0 = time.perf_counter()
    call()
    return (time.perf_counter() - t0) * 1000


def run(count: int, seed: int, bench: Path | None) -> dict:
    qa, edits = build(bench)
    gc.freeze()  # as score_runs does once the benchmark and journals are loaded
    rng = random.Random(seed)
    times: list[float] = []
    exceptions: list[str] = []
    internal = 0
    slowest = (0.0, "")
    raw_over = 0
    for n in range(count):
        is_edit = rng.random() < 0.3
        inst = rng.choice(edits if is_edit else qa)
        text = edit_reply(rng, inst) if is_edit else qa_reply(rng, inst)
        modality = rng.choice(["geojson", "together"] if is_edit else ["geojson", "image", "together"])
        form = rng.choice(["open", "mcq"])
        # The runner's retry decision and the scorer's verdict run in different stages (often different
        # processes), so each is one sample's work for its stage and is timed on its own.
        calls = (
            [
                partial(read_edit_reply, text, inst, modality),
                partial(score_edit, inst, text, modality=modality),
            ]
            if is_edit
            else [partial(score_qa, inst, text, form=form, modality=modality)]
        )
        for call in calls:
            t0 = time.perf_counter()
            try:
                v = call()
                internal += getattr(v, "reason", "").startswith(INTERNAL_ERROR)
            except Exception as exc:  # noqa: BLE001 -- counting is the point
                exceptions.append(f"{inst['id']}: {type(exc).__name__}: {exc}"[:200])
                continue
            ms = (time.perf_counter() - t0) * 1000
            if n < WARMUP:
                continue
            if ms > LIMIT_MS:
                # A wall-clock spike can be the scheduler or the collector, not the code: the sample is
                # re-timed alone and counts as over the limit only if its best of three still is.
                raw_over += 1
                ms = min(ms, *(_time_once(call) for _ in range(3)))
            times.append(ms)
            if ms > slowest[0]:
                slowest = (ms, f"{inst['id']} ({len(text)} chars)")
        if n % 10_000 == 0:
            print(f"{n} samples", file=sys.stderr, flush=True)
    times.sort()
    return {
        "count": count,
        "qa_instances": len(qa),
        "edit_instances": len(edits),
        "exceptions": len(exceptions),
        "exception_examples": exceptions[:5],
        "internal_errors": internal,
        "timed_after_warmup": len(times),
        "p50_ms": round(statistics.median(times), 3) if times else None,
        "p99_ms": round(times[int(0.99 * (len(times) - 1))], 3) if times else None,
        "max_ms": round(times[-1], 3) if times else None,
        "slowest": slowest[1],
        "over_limit": sum(t > LIMIT_MS for t in times),
        "over_limit_before_retime": raw_over,
        "limit_ms": LIMIT_MS,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--bench", type=Path, help="an existing benchmark directory (default: build one)")
    args = ap.parse_args()
    figures = run(args.count, args.seed, args.bench)
    print(json.dumps(figures, indent=1))
    return 0 if figures["exceptions"] == 0 and figures["over_limit"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
