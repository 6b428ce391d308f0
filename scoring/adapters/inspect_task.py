"""An inspect_ai task over a Spatial Gap benchmark (``pip install 'spatialgap[inspect]'``).

Every sample is one instance in one input type and form, sent as the very messages
``spatialgap run`` sends (scoring.adapters.turns: maps as image content with run's `detail`,
and the one corrective turn after an unusable edit reply), and scored by our reader and
verdicts (scoring.score.verdicts.score_prediction): a sample is correct exactly when its verdict
counts as correct. Metrics: accuracy with its standard error, overall and per family.
``inspect view`` then shows every sample with its reply and the verdict's reason. Registered
through the package's `inspect_ai` entry point, so an installed package is found by name:

    inspect eval spatialgap/qa -T bench=BENCH -T modality=image -T form=mcq \\
        --model openai-api/local/my-model    # LOCAL_BASE_URL, LOCAL_API_KEY

(`spatialgap/edit`, and `spatialgap/spatialgap -T task=qa|edit`: spatialgap.inspect_tasks; the
task below is also registered as `scoring/spatialgap`.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver

from scoring.adapters.turns import IMAGE_DETAIL, corrective_turn, sample_messages
from scoring.formats.benchmark import Benchmark
from scoring.formats.mapsets import read_map_set
from scoring.score.verdicts import score_prediction
from scoring.vocab import Form, Modality, Verdict
from scoring.vocab import Task as SgTask

try:  # per-family metrics where this inspect_ai has them
    from inspect_ai.scorer import grouped
except ImportError:  # pragma: no cover - older inspect_ai
    grouped = None


def _content(parts: Any) -> Any:
    """OpenAI message content -> inspect_ai content (text, or text and image parts in order)."""
    if isinstance(parts, str):
        return parts
    out: list[Any] = []
    for p in parts:
        if p.get("type") == "image_url":
            image = p["image_url"]
            out.append(ContentImage(image=image["url"], detail=image.get("detail", IMAGE_DETAIL)))
        else:
            out.append(ContentText(text=p.get("text", "")))
    return out


def _image(bench: Benchmark, instance_id: str, modality: Modality) -> Any:
    if not modality.has_image:
        return None
    if modality.map_set:
        return read_map_set(bench.maps_dir, instance_id, modality)
    return (bench.maps_dir / f"{instance_id}.png").read_bytes()


def _chat(messages: list[dict]) -> list[Any]:
    return [
        ChatMessageSystem(content=m["content"])
        if m["role"] == "system"
        else ChatMessageUser(content=_content(m["content"]))
        for m in messages
    ]


def samples(
    bench: Benchmark,
    *,
    task_name: str,
    modality: Modality,
    form: str,
    limit: int | None,
    image_detail: str = IMAGE_DETAIL,
) -> list[Sample]:
    """One inspect Sample per instance: our messages, the instance id as target."""
    sg_task, mod = SgTask(task_name), Modality(modality)
    out = []
    for inst in bench.of_task(sg_task)[:limit]:
        messages = sample_messages(inst, mod, form, _image(bench, inst["id"], mod), image_detail)
        chat = _chat(messages)
        out.append(
            Sample(
                id=f"{inst['id']}|{form}",
                input=chat,
                target=inst["id"],
                metadata={
                    "relation": inst["relation"],
                    "family": inst["family"],
                    "form": form,
                    "modality": modality,
                },
            )
        )
    return out


@solver
def spatialgap_turns(bench_dir: str) -> Any:
    """`generate`, then, for an unusable edit reply, the corrective turn `run` sends and one more
    `generate` (the reply scored is the last one, as `score` takes run's final attempt)."""
    bench = Benchmark.open(bench_dir)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await generate(state)
        inst = bench.get(state.target.text)
        reply = state.output.completion if state.output and not state.output.error else None
        if inst is None:
            return state
        follow_up = corrective_turn(inst, Modality(state.metadata["modality"]), [], reply)
        if follow_up is None:
            return state
        state.messages.append(ChatMessageUser(content=follow_up[-1]["content"]))
        return await generate(state)

    return solve


@scorer(metrics=[accuracy(), stderr()] + ([grouped(accuracy(), "family")] if grouped else []))
def spatialgap_verdict(bench_dir: str) -> Any:
    """Our reader and verdict: CORRECT when the verdict counts as correct (correct or a correct
    refusal), the reading as the answer and the verdict's reason as the explanation."""
    bench = Benchmark.open(bench_dir)

    async def score(state: TaskState, target: Target) -> Score:
        inst = bench.get(target.text)
        if inst is None:
            raise ValueError(f"{bench_dir}: no instance {target.text}")
        text = state.output.completion if state.output and not state.output.error else None
        record = {
            "task": inst["task"],
            "form": state.metadata["form"],
            "modality": state.metadata["modality"],
            "status": "ok" if text is not None else "error",
            "text": text,
            "error": None if text is not None else "no reply",
        }
        v = score_prediction(inst, record, bench.path)
        return Score(
            value=CORRECT if Verdict(v.verdict).counts_as_correct else INCORRECT,
            answer=None if v.value is None else json.dumps(v.value, ensure_ascii=False, default=str),
            explanation=v.reason,
            metadata={"verdict": v.verdict, "quality": v.quality},
        )

    return score


@task
def spatialgap(
    bench: str,
    task: str = "qa",
    modality: Modality = Modality.GEOJSON,
    form: str = "open",
    limit: int | None = None,
    max_tokens: int = 1024,
    image_detail: str = IMAGE_DETAIL,
) -> Task:
    """One task, form and input type of a benchmark (or of an export of one): ``task`` qa or
    edit, ``form`` open or mcq (edits: ignored), ``modality`` any input type; ``image_detail``
    as a model config's (run's default: high)."""
    return make_task(bench, task, modality, form, limit, max_tokens, image_detail)


def make_task(
    bench: str,
    task: str = "qa",
    modality: Modality | str = Modality.GEOJSON,
    form: str = "open",
    limit: int | None = None,
    max_tokens: int = 1024,
    image_detail: str = IMAGE_DETAIL,
) -> Task:
    """The inspect Task of `spatialgap` (undecorated: spatialgap.inspect_tasks registers it
    under the distribution's name too)."""
    b = Benchmark.open(Path(bench), require_instances=True)
    form = str(Form.EDIT) if task == SgTask.EDIT else str(Form(form))
    return Task(
        dataset=MemoryDataset(
            samples(
                b,
                task_name=task,
                modality=Modality(modality),
                form=form,
                limit=limit,
                image_detail=image_detail,
            ),
            name=b.city,
        ),
        solver=spatialgap_turns(str(b.path)),
        scorer=spatialgap_verdict(str(b.path)),
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens, seed=0),
        metadata={
            "benchmark_sha256": b.sha256,
            "protocol": b.protocol,
            "task": task,
            "modality": modality,
            "form": form,
        },
    )
