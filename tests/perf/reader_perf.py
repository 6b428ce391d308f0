"""Reply reading speed (make bench): a 50 MB reply with a long reasoning block, pathological
nesting, and the rate of typical short answers. Targets: the huge and nested bodies within
3 s, typical answers at more than 5,000 readings a second. Prints one JSON document.

    python tests/perf/reader_perf.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scoring import answers

TARGET_HUGE_S = 3.0
TARGET_RATE = 5_000


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


if __name__ == "__main__":
    huge, nested, rate = huge_s(), nested_s(), typical_rate()
    print(
        json.dumps(
            {
                "huge_body_s": round(huge, 3),
                "nested_s": round(nested, 3),
                "typical_per_s": round(rate),
                "targets": {
                    f"huge body <= {TARGET_HUGE_S} s": huge <= TARGET_HUGE_S,
                    f"nested <= {TARGET_HUGE_S} s": nested <= TARGET_HUGE_S,
                    f"typical >= {TARGET_RATE}/s": rate >= TARGET_RATE,
                },
            },
            indent=1,
        )
    )
