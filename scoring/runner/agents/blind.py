"""The `blind` agent: the options-only baseline (scoring.build.blind) served like a model.

It reads nothing of a request but the question's template (its wording with numbers and feature
ids blanked) and the options offered, and answers with the option its learner thinks right. The
learner is trained on the options of the benchmark's other items: the benchmarks named by
SPATIALGAP_BLIND_BENCH (benchmark directories separated by the path separator; `evaluate` sets it)
are split into FOLDS folds by what a solver sees of an item, and an item is answered by the model
fitted on the other folds of the benchmark that holds it, so it never learns from its own answer.
An item no listed benchmark holds, open questions and edits are answered as `chance` answers them.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from scoring.build.blind import FOLDS, LETTERS, BlindModel, Example, examples_of, fit, fold_of
from scoring.build.blind_features import OptionsItem, question_key
from scoring.runner.agents.chance import chance
from scoring.runner.agents.prompt_view import parse_prompt
from scoring.runner.agents.registry import BENCH_ENV, agent


@dataclass
class _Bench:
    """One benchmark's multiple-choice items as the learner sees them, and its fold models."""

    stamp: float
    examples: list[Example]
    index: set[tuple[str, tuple[str, ...]]]
    models: dict[int, BlindModel]


_BENCHES: dict[str, _Bench] = {}
_LOCK = threading.Lock()


def _load(path: Path) -> _Bench | None:
    """The benchmark at `path` (re-read when its qa.jsonl changed), None if it has none."""
    qa = path / "qa.jsonl"
    try:
        stamp = qa.stat().st_mtime
    except OSError:
        return None
    held = _BENCHES.get(str(path))
    if held is not None and held.stamp == stamp:
        return held
    with qa.open(encoding="utf-8") as fh:
        examples = examples_of(json.loads(line) for line in fh if line.strip())
    bench = _Bench(stamp, examples, {(e.item.key, e.item.choices) for e in examples}, {})
    _BENCHES[str(path)] = bench
    return bench


def _model_for(item: OptionsItem) -> BlindModel | None:
    """The model of the other folds of the listed benchmark that holds `item`."""
    fold = fold_of(item)
    for part in os.environ.get(BENCH_ENV, "").split(os.pathsep):
        if not part:
            continue
        with _LOCK:
            bench = _load(Path(part))
            if bench is None or (item.key, item.choices) not in bench.index:
                continue
            if fold not in bench.models:
                bench.models[fold] = fit([e for e in bench.examples if fold_of(e.item, FOLDS) != fold])
            return bench.models[fold]
    return None


@agent("blind", reads_images=False)
def blind(messages: list[dict]) -> str:
    """Answers a multiple-choice item from its options alone (open questions and edits: chance)."""
    v = parse_prompt(messages)
    if v.task == "edit" or len(v.choices) < 2 or v.answer_category != "choice":
        return chance(messages)
    item = OptionsItem(question_key(v.question), tuple(v.choices))
    model = _model_for(item)
    if model is None:
        return chance(messages)
    return f"Answer: {LETTERS[model.choose(item)]}"
