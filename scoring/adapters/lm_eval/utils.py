"""lm-eval tasks over a Spatial Gap benchmark's text input type (geojson): each document is
one instance with the very system and user messages `spatialgap run` sends, and each reply is
scored by our reader and verdicts (``acc`` = the verdict counts as correct; lm-eval reports its
stderr). The benchmark comes from ``--metadata '{"bench": "PATH"}'`` (a benchmark directory or
an export of one). An unusable edit reply gets run's corrective turn with the
`spatialgap-chat-completions` model (scoring.adapters.lm_eval.model; `python -m
scoring.adapters.lm_eval` registers it and includes these tasks). See the README's *lm-eval*
section."""

from __future__ import annotations

import json
from typing import Any

from scoring.adapters.turns import sample_messages
from scoring.formats.benchmark import Benchmark
from scoring.score.verdicts import score_prediction
from scoring.vocab import Modality, Task, Verdict

MODALITY = Modality.GEOJSON  # lm-eval's chat-completions models take text only


def _docs(bench: str | None, task: str, form: str) -> Any:
    import datasets

    if not bench:
        raise ValueError('spatialgap tasks need the benchmark: --metadata \'{"bench": "PATH"}\'')
    b = Benchmark.open(bench, require_instances=True)
    docs = []
    for inst in b.of_task(task):
        system, user = sample_messages(inst, MODALITY, form, None)
        docs.append(
            {
                "id": inst["id"],
                "form": form,
                "modality": str(MODALITY),
                "system": system["content"],
                "user": user["content"],
                "instance": json.dumps(inst, ensure_ascii=False),
                "bench": str(b.path),
            }
        )
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)})


def qa_open(bench: str | None = None, **_: Any) -> Any:
    return _docs(bench, Task.QA, "open")


def qa_mcq(bench: str | None = None, **_: Any) -> Any:
    return _docs(bench, Task.QA, "mcq")


def edit(bench: str | None = None, **_: Any) -> Any:
    return _docs(bench, Task.EDIT, "edit")


def process_results(doc: dict, results: list[str]) -> dict[str, float]:
    """Our verdict of the reply: 1.0 when it counts as correct."""
    inst = json.loads(doc["instance"])
    record = {
        "task": inst["task"],
        "form": doc["form"],
        "modality": str(MODALITY),
        "status": "ok",
        "text": results[0],
    }
    v = score_prediction(inst, record, doc["bench"])
    return {"acc": 1.0 if Verdict(v.verdict).counts_as_correct else 0.0}
