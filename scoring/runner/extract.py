"""The optional extractor model (`spatialgap extract`, `evaluate --extractor`): a model asked, with
one fixed prompt, what a reply's final answer is, for the QA replies the rules leave unparsed.

Its answers are recorded beside the run, in `RUN/extractions.jsonl` (one line per reply it read,
keyed by the prediction's key), so scoring stays offline and deterministic: `score` reads an
unparsed reply's extraction with the same rules and marks that verdict `read_by: extractor`
(else `rules`); the report shows the rules-only figure beside the assisted one. A reply the rules
read is never sent. Re-running skips the replies already extracted, and the extractor's tokens
are recorded on each line (they count in cost).

>>> print(EXTRACTOR_PROMPT.splitlines()[0])
You read another model's reply to a question and report the final answer the reply commits to.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoring.answers import ANSWER_FORMATS, parse_answer
from scoring.answers.context import reading_context
from scoring.errors import InputError
from scoring.formats.benchmark import iter_instances
from scoring.formats.records import Instance
from scoring.formats.rundir import PREDICTIONS, final_predictions
from scoring.runner.client import ChatClient
from scoring.runner.config import EnvKeyProvider, ModelSpec
from scoring.support.files import json_line, open_append, read_jsonl, sha256_hex
from scoring.vocab import AnswerType

EXTRACTIONS = "extractions.jsonl"
EXTRACTOR_PROMPT = (
    "You read another model's reply to a question and report the final answer the reply commits to.\n"
    "Do not answer the question yourself and do not judge whether the reply is right: only report\n"
    "what the reply says its answer is. If the reply gives two different final answers, or none,\n"
    "reply NONE. If the reply says the answer cannot be determined, reply: cannot be determined.\n\n"
    "Question: {question}\n{options}"
    "The answer is asked for as follows: {instruction}\n\n"
    "Reply to read:\n<<<\n{reply}\n>>>\n\n"
    'Report it as one line: "Answer: <the reply\'s final answer>".'
)
_MAX_REPLY = 8_000  # characters of the reply shown to the extractor (its end: answers come last)


@dataclass(frozen=True)
class ExtractSummary:
    """What one extraction pass did."""

    unread: int  # QA replies the rules leave unparsed
    sent: int  # of those, sent to the extractor now
    reused: int  # already extracted by an earlier pass
    failed: int  # requests that failed (retried by the next pass)


def extractor_messages(instance: Instance, form: str, reply: str) -> list[dict[str, Any]]:
    """The extractor's one user message for `reply` to `instance` in `form`."""
    choices = list(instance.get("choices") or []) if form == "mcq" else []
    options = "".join(f"{chr(ord('A') + i)}) {c}\n" for i, c in enumerate(choices))
    answer_type = "choice" if choices else str(instance.get("answer_type"))
    text = EXTRACTOR_PROMPT.format(
        question=instance.get("question", ""),
        options=f"Options:\n{options}\n" if options else "\n",
        instruction=ANSWER_FORMATS[AnswerType(answer_type)].instruction,
        reply=reply[-_MAX_REPLY:],
    )
    return [{"role": "user", "content": text}]


def rules_leave_unread(instance: Instance, form: str, reply: str) -> bool:
    """The rules read neither an answer nor a refusal in `reply` (as the scorer reads it)."""
    answer_type, context = reading_context(instance, form)
    parsed = parse_answer(reply, answer_type, **context)
    return not parsed.ok and not parsed.refusal


def read_extractions(run_dir: str | Path) -> dict[str, dict]:
    """The extractions recorded beside a run, by prediction key (the latest line of each)."""
    path = Path(run_dir) / EXTRACTIONS
    if not path.is_file():
        return {}
    out: dict[str, dict] = {}
    for _, rec in read_jsonl(path):
        if isinstance(rec, dict) and isinstance(rec.get("key"), str) and isinstance(rec.get("text"), str):
            out[rec["key"]] = rec
    return out


def _unread(bench_dir: Path, run_dir: Path) -> list[tuple[Instance, dict]]:
    instances = {i["id"]: i for i in iter_instances(bench_dir, ("qa",))}
    found = []
    for rec in final_predictions(run_dir / PREDICTIONS).values():
        inst = instances.get(str(rec.get("instance_id")))
        text = rec.get("text")
        if inst is None or rec.get("status") != "ok" or not isinstance(text, str):
            continue
        if rules_leave_unread(inst, str(rec.get("form") or "open"), text):
            found.append((inst, rec))
    return found


async def _send_all(client: ChatClient, todo: list[tuple[Instance, dict]], out: Any, spec: ModelSpec) -> int:
    failed = 0
    for inst, rec in todo:
        messages = extractor_messages(inst, str(rec.get("form") or "open"), rec["text"])
        got = await client.complete(messages, sample=str(rec.get("key")))
        if not got.ok or got.text is None:
            failed += 1
            continue
        line = {
            "key": rec["key"],
            "instance_id": inst["id"],
            "form": rec.get("form"),
            "reply_sha256": sha256_hex(rec["text"]),
            "extractor": spec.name,
            "prompt_sha256": sha256_hex(EXTRACTOR_PROMPT),
            "text": got.text,
            "usage": got.usage,
            "price_in": spec.price_in,  # per million tokens: the extractor's calls count in cost
            "price_out": spec.price_out,
        }
        out.write(json_line(line))
        out.flush()
    return failed


def extract_run(bench_dir: str | Path, run_dir: str | Path, spec: ModelSpec) -> ExtractSummary:
    """Ask `spec` about the QA replies of `run_dir` the rules leave unparsed (see the module)."""
    bench_dir, run_dir = Path(bench_dir), Path(run_dir)
    if not (run_dir / PREDICTIONS).is_file():
        raise InputError(f"{run_dir}: no {PREDICTIONS} (not a run directory)")
    unread = _unread(bench_dir, run_dir)
    done = read_extractions(run_dir)
    todo = [(inst, rec) for inst, rec in unread if rec.get("key") not in done]
    failed = 0
    if todo:
        client = ChatClient(spec, key_provider=EnvKeyProvider())
        loop = asyncio.new_event_loop()
        try:
            with open_append(run_dir / EXTRACTIONS, "extractions journal") as out:
                failed = loop.run_until_complete(_send_all(client, todo, out, spec))
        finally:
            loop.run_until_complete(client.aclose())
            loop.close()
    return ExtractSummary(len(unread), len(todo) - failed, len(unread) - len(todo), failed)


def extraction_for(extractions: Mapping[str, dict], record: Mapping[str, Any]) -> str | None:
    """The extractor's text for a prediction record, when it read that very reply."""
    found = extractions.get(str(record.get("key")))
    text = record.get("text")
    if found is None or not isinstance(text, str) or found.get("reply_sha256") != sha256_hex(text):
        return None
    return str(found["text"])
