"""Reply reading speed (make bench): a 50 MB reply with a long reasoning block, pathological
nesting, the rate of typical short answers, and the rate over the reply corpus
(tests/answers/corpus/) beside the same rate of the reader before evidence levels (commit
BASELINE, read from git into a temporary folder and run in a child process under the same load).
Targets: the huge and nested bodies within 3 s, typical answers at more than 5,000 readings a
second, the corpus no more than 2x slower than the baseline. Prints one JSON document.

    python tests/perf/reader_perf.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the reader measured: this checkout's, or the baseline's unpacked copy (the child process)
sys.path.insert(0, os.environ.get("READER_PERF_PACKAGE", str(ROOT)))

from scoring import answers  # noqa: E402 -- after choosing which package to measure

TARGET_HUGE_S = 3.0
TARGET_RATE = 5_000
BASELINE = "44980d2"  # the last commit whose reader took the first answer pattern that matched
MAX_SLOWDOWN = 2.0


def huge_s() -> float:
    body = (
        "<think>" + "reasoning 12 m north (A) F1 " * 2_000_000 + "</think>\nFinal answer: (B), 7 m, F2, north"
    )
    t0 = time.perf_counter()
    answers.parse_choice(body)
    answers.parse_number(body, "distance")
    answers.parse_edit(body)
    return time.perf_counter() - t0


def nested_s() -> float:
    t0 = time.perf_counter()
    answers.parse_direction("<think>" * 100_000, "8")
    answers.parse_edit("{" * 300_000)
    return time.perf_counter() - t0


def typical_rate() -> float:
    samples = [
        "Final answer: (C) F3",
        "approximately 1.2 km",
        "north-east",
        "F2 → F1 → F3",
        "Yes",
        "<think>short</think>The answer is 45°",
    ] * 500
    t0 = time.perf_counter()
    for s in samples:
        answers.parse_choice(s)
        answers.parse_number(s, "distance")
    return 2 * len(samples) / (time.perf_counter() - t0)


def corpus_rate(rounds: int = 3) -> float:
    """Replies of the reply corpus read per second (each with its answer type and context)."""
    items = [
        json.loads(line)
        for path in sorted((ROOT / "tests" / "answers" / "corpus").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for item in items:
            answers.parse_answer(item["reply"], item["answer_type"], **item["context"])
        best = min(best, time.perf_counter() - t0)
    return len(items) / best


def baseline_corpus_rate() -> float | None:
    """The corpus rate of the reader at BASELINE (None outside a git checkout)."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", BASELINE, "scoring"], capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        env = {**os.environ, "READER_PERF_PACKAGE": tmp}
        out = subprocess.run(
            [sys.executable, __file__, "--corpus-rate"], capture_output=True, text=True, env=env, check=True
        )
    return float(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__" and sys.argv[1:] == ["--corpus-rate"]:
    print(corpus_rate())
elif __name__ == "__main__":
    huge, nested, rate = huge_s(), nested_s(), typical_rate()
    corpus, before = corpus_rate(), baseline_corpus_rate()
    print(
        json.dumps(
            {
                "huge_body_s": round(huge, 3),
                "nested_s": round(nested, 3),
                "typical_per_s": round(rate),
                "corpus_replies_per_s": round(corpus),
                f"corpus_replies_per_s_at_{BASELINE}": before and round(before),
                "targets": {
                    f"corpus at most {MAX_SLOWDOWN}x slower than {BASELINE}": (
                        None if before is None else corpus * MAX_SLOWDOWN >= before
                    ),
                    f"huge body <= {TARGET_HUGE_S} s": huge <= TARGET_HUGE_S,
                    f"nested <= {TARGET_HUGE_S} s": nested <= TARGET_HUGE_S,
                    f"typical >= {TARGET_RATE}/s": rate >= TARGET_RATE,
                },
            },
            indent=1,
        )
    )
