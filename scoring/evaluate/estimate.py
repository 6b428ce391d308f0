"""`spatialgap evaluate --estimate`: tokens and cost of a sweep before anything is sent, from the
prompts themselves (each city's benchmark is built or reused; no agent starts, no request goes out).

Tokens in are estimated from the rendered messages: text at CHARS_PER_TOKEN characters a token
(no tokenizer of the model is available offline; real counts come from each reply's `usage`) and
each map at IMAGE_TOKENS (a 1024 px map in OpenAI's high-detail tiling: 85 + 4 x 170). Tokens out
are bounded by the configured max_tokens (or max_completion_tokens) per request; "unbounded" when
neither is sent. Cost (an upper bound on output) when price_in / price_out are configured."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scoring.evaluate.cities import prepare
from scoring.evaluate.plan import Participant, SweepPlan
from scoring.formats.benchmark import Benchmark
from scoring.formats.mapsets import MapSet
from scoring.formats.records import Instance
from scoring.runner.prompts import build_messages
from scoring.vocab import Modality, Task, forms_of

CHARS_PER_TOKEN = 4.0
IMAGE_TOKENS = 765
MILLION = 1_000_000
_FAKE_PNG = b"\x89PNG-estimate"  # never sent: the estimate counts a map, not its bytes


@dataclass
class Estimate:
    participant: str
    modality: str
    task: str
    requests: int = 0
    tokens_in: int = 0
    out_cap: int | None = 0  # None: no output cap is sent
    skipped: int = 0  # requests whose prompt could not be rendered here (e.g. map sets)


def message_tokens(messages: list[dict]) -> int:
    """Estimated input tokens of one request's messages (see the module docstring)."""
    chars, images = 0, 0
    for m in messages:
        content = m.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        for part in parts:
            if part.get("type") == "image_url":
                images += 1
            else:
                chars += len(str(part.get("text") or ""))
    return math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS


def _image_arg(modality: str, inst: Instance) -> bytes | MapSet | None:
    m = Modality(modality)
    if m.map_set:
        return MapSet(modality=m, instance_id=str(inst["id"]), maps=(), edit_map=0, pngs=(_FAKE_PNG,))
    return _FAKE_PNG if m.has_image else None


def _out_cap(p: Participant) -> int | None:
    if p.spec is None:
        return 1024  # a built-in agent's default cap (it replies in a few dozen tokens)
    return p.spec.max_tokens if p.spec.max_tokens is not None else p.spec.max_completion_tokens


def estimate_sweep(plan: SweepPlan) -> list[Estimate]:
    """One Estimate per participant x input type x task over every city of the plan."""
    out: dict[tuple[str, str, str], Estimate] = {}
    for city in plan.cities:
        prepare(city, plan.force, plan.jobs, plan.progress, wants_maps=False)
        bench = Benchmark.open(city.bench)
        for p in plan.participants:
            for modality in (m for m in plan.modalities if m in p.modalities):
                for task in plan.tasks:
                    e = out.setdefault((p.name, modality, task), Estimate(p.name, modality, task))
                    insts = list(bench.instances[Task(task)].values())[: plan.limit]
                    for inst in insts:
                        for form in forms_of(Task(task)):
                            try:
                                msgs = build_messages(
                                    inst, Modality(modality), form, _image_arg(modality, inst)
                                )
                            except (ValueError, KeyError, IndexError, TypeError):
                                e.skipped += 1
                                continue
                            e.requests += 1
                            e.tokens_in += message_tokens(msgs)
    caps = {p.name: _out_cap(p) for p in plan.participants}
    for e in out.values():
        cap = caps[e.participant]
        e.out_cap = None if cap is None else cap * e.requests
    return list(out.values())


def estimate_screen(plan: SweepPlan, estimates: list[Estimate]) -> str:
    """The estimate as a table, with the cost where the participant has prices."""
    specs = {p.name: p.spec for p in plan.participants}
    head = (
        f"{'participant':<16}{'input type':>14}{'task':>6}{'requests':>10}"
        f"{'≈ tokens in':>14}{'tokens out ≤':>14}{'cost ≤':>12}"
    )
    lines = [head]
    for e in estimates:
        spec = specs.get(e.participant)
        cost = "no price"
        if spec is not None and (spec.price_in is not None or spec.price_out is not None):
            if e.out_cap is None and spec.price_out:
                cost = "unbounded"
            else:
                c = (
                    e.tokens_in * (spec.price_in or 0) / MILLION
                    + (e.out_cap or 0) * (spec.price_out or 0) / MILLION
                )
                cost = f"{c:.2f}"
        out = "unbounded" if e.out_cap is None else str(e.out_cap)
        skipped = f"  ({e.skipped} not estimated)" if e.skipped else ""
        lines.append(
            f"{e.participant:<16}{e.modality:>14}{e.task:>6}{e.requests:>10}{e.tokens_in:>14}{out:>14}{cost:>12}{skipped}"
        )
    lines.append(
        f"estimate only: nothing was sent (text at {CHARS_PER_TOKEN:g} characters a token, {IMAGE_TOKENS} "
        "tokens a map; output bounded by max_tokens; corrective edit retries not counted)"
    )
    return "\n".join(lines)


def request_cost(
    instances: list[Instance],
    modality: str,
    form_of,
    price_in: float | None,
    price_out: float | None,
    out_cap,
) -> tuple[int, int, float | None]:
    """(requests, estimated tokens in, cost or None without a price) of sending `instances` in one
    modality, `form_of(instance)` giving each one's form; output counted at `out_cap` a request
    (an upper bound). The plugin asks with this before it sends more than one instance."""
    requests = tokens = 0
    for inst in instances:
        try:
            msgs = build_messages(inst, Modality(modality), form_of(inst), _image_arg(modality, inst))
        except (ValueError, KeyError, IndexError, TypeError):
            continue
        requests += 1
        tokens += message_tokens(msgs)
    if price_in is None and price_out is None:
        return requests, tokens, None
    return (
        requests,
        tokens,
        (tokens * (price_in or 0) + requests * (out_cap or 0) * (price_out or 0)) / MILLION,
    )
