"""The `blind` agent answers a multiple-choice item from its options alone, with the model of the
other folds of the benchmark that holds it; anything else it answers as chance does."""

from __future__ import annotations

import json
import random

from scoring.build.blind import LETTERS
from scoring.relations.base import mcq
from scoring.runner.agents.blind import BENCH_ENV, blind

QUESTION = "How far is F1 from F0, in metres?"


def _leaky_bench(tmp_path, n: int = 200):
    """A benchmark whose right option is always the largest value."""
    rng = random.Random(0)
    lines = []
    for k in range(n):
        v = rng.uniform(10, 300)
        choices, letter = mcq(rng, f"{v:.1f} m", [f"{v * f:.1f} m" for f in (0.5, 0.7, 0.85)])
        lines.append(
            {
                "id": f"t-qa-M01-{k:03d}",
                "relation": "M01",
                "question": QUESTION,
                "choices": choices,
                "correct_choice": letter,
            }
        )
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return lines


def _messages(choices: list[str]) -> list[dict]:
    options = "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(choices))
    text = f"Question: {QUESTION}\n\n{options}\n\nAnswer with the option letter only (A, B, C or D)."
    return [{"role": "system", "content": "You answer questions."}, {"role": "user", "content": text}]


def test_blind_agent_learns_the_options_of_the_other_items_of_its_benchmark(tmp_path, monkeypatch):
    items = _leaky_bench(tmp_path)
    monkeypatch.setenv(BENCH_ENV, str(tmp_path))
    right = sum(blind(_messages(i["choices"])) == f"Answer: {i['correct_choice']}" for i in items[:60])
    assert right >= 50


def test_blind_agent_answers_an_item_of_no_listed_benchmark_as_chance(tmp_path, monkeypatch):
    _leaky_bench(tmp_path)
    monkeypatch.setenv(BENCH_ENV, str(tmp_path))
    reply = blind(_messages(["1.0 m", "2.0 m", "3.0 m", "4.0 m"]))
    assert reply.startswith("Answer:")
