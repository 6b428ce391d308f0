"""``spatialgap frieda-run``: send a FRIEDA-format dataset (``dataset``) to a model endpoint in the
direct and/or contextual setting, write FRIEDA-format result files and score them with the
``frieda-score`` rules.

A command of its own rather than a mode of ``spatialgap run``: ``run`` sends a Spatial Gap
benchmark (instances with scenes and oracle answers, one modality/task/form per run, a journal
keyed by instance hash) while a FRIEDA dataset is questions with map files, answered free-form in
FRIEDA's settings and scored by different rules. What they share is reused: the endpoint client
(retries, rate limits, key handling), the model options, and the multi-image user content
(``scoring.runner.images``).

Each request: FRIEDA's answer instructions as the system turn (our wording of them, ending with
the "Final answer:" request), the question text then the maps (several ``image_url`` parts, OpenAI
chat format) as the user turn. The reply's text after its last "Final answer:" is split on ";" into
``_response`` parts, as FRIEDA did; without that line the whole reply is the single part.

OUT:
    responses.jsonl                 the journal: one line per reply, appended as it arrives;
                                    re-running with the same OUT resends only what failed or changed
    results/<model>_wo_contextual.json, results/<model>_w_contextual.json
                                    FRIEDA result records (``correct`` is our verdict)
    verdicts.jsonl, summary.json    as written by ``frieda-score`` over results/
    run.json                        what was run, with what (never a key)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from scoring.errors import InputError, OutputError
from scoring.formats.benchmark import TASK_FILES
from scoring.formats.rundir import RUN_MANIFEST, RunDirLock
from scoring.frieda.cli import format_table
from scoring.frieda.dataset import SETTING_SUFFIX, SETTINGS, Dataset, Question, load_dataset
from scoring.frieda.files import score_files
from scoring.frieda.published import RULE_SETS, score_by
from scoring.frieda.stats import format_statistics
from scoring.runner.cli import add_generation_options, add_model_options, add_wait_option, spec_from_args
from scoring.runner.client import ChatClient, Outcome
from scoring.runner.config import EnvKeyProvider, KeyProvider, ModelSpec, Redactor
from scoring.runner.images import user_content
from scoring.support.files import (
    canonical_json,
    json_line,
    open_append,
    refuse_non_regular,
    sha256_hex,
    write_json_atomic,
)

JOURNAL = "responses.jsonl"
RESULTS = "results"
# FRIEDA's answer instructions, in our words (same rules: copy map text, keep the map's units,
# prefer the scale bar, 8 compass points, ";" between parts, end with "Final answer:").
INSTRUCTIONS = """Answer the question using the map images provided, following these rules.

General:
- When the answer is text shown on a map, copy it exactly as it appears there.

Numbers:
- Give the unit the map uses; do not convert (keep 1200 m as 1200 m, not 1.2 km).
- When a map has both a frame and a scale bar, measure with the scale bar.
- For an area, use the squared unit (e.g. km^2).
- Write numbers as digits (4, not four).

Directions:
- Use one of the 8 compass directions only:
  North, North East, East, South East, South, South West, West, North West.
- Put North or South before East or West.
- The north arrow does not always point up.

Answers with several parts:
- Separate the parts with a semicolon (;), e.g. Zone A; Zone B.

End your response with 'Final answer: ' followed by your answer, e.g. 'Final answer: 5'."""
INSTRUCTIONS_SHA256 = sha256_hex(INSTRUCTIONS)
_FINAL = re.compile(r"final\s+answer\s*[:：]", re.I)
_MARKUP = re.compile(r"^[\s*_`#>]+|[\s*_`]+$")


def final_answer(text: str | None) -> tuple[str, list[str]]:
    """(the answer text, its ";" parts): the text after the reply's last "Final answer:", else
    the whole reply."""
    text = text or ""
    matches = list(_FINAL.finditer(text))
    answer = text[matches[-1].end() :] if matches else text
    answer = _MARKUP.sub("", answer.strip())
    parts = [p for p in (_MARKUP.sub("", s.strip()) for s in answer.split(";")) if p]
    return answer, parts


def build_messages(question: Question, images: list[bytes]) -> list[dict]:
    return [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": user_content(question.text, images)},
    ]


def request_key(spec: ModelSpec, question: Question, maps: list[str], image_hashes: list[str]) -> str:
    """What decides a reply: the model and its parameters, the instructions, the question and the
    maps in order (by name and content)."""
    return sha256_hex(
        canonical_json(
            {
                "model": spec.model,
                "kind": spec.kind,
                "base_url": spec.public_dict()["base_url"],
                "generation": spec.generation_params(),
                "instructions": INSTRUCTIONS_SHA256,
                "question": question.text,
                "maps": list(zip(maps, image_hashes, strict=True)),
            }
        )
    )


def _read_journal(path: Path) -> dict[tuple[str, str], dict]:
    """The last ok reply per (setting, question_ref); torn or foreign lines are skipped."""
    out: dict[tuple[str, str], dict] = {}
    refuse_non_regular(path)
    if not path.is_file():
        return out
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut by an interrupted run, or damaged (a number past int's limit)
            except RecursionError:  # nested too deeply for the reader: that question is resent
                print(f"{path}:{n}: skipping a journal line nested too deeply to read", file=sys.stderr)
                continue
            if isinstance(rec, dict) and (rec.get("outcome") or {}).get("status") == "ok":
                out[(str(rec.get("setting")), str(rec.get("question_ref")))] = rec
    return out


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", name).strip("-") or "model"


async def _send_all(
    ds: Dataset,
    spec: ModelSpec,
    jobs: list[tuple[Question, str]],
    seed: int,
    journal: Path,
    key_provider: KeyProvider,
) -> tuple[dict[tuple[str, str], dict], dict[str, int], str | None]:
    done = _read_journal(journal)
    counts = {"sent": 0, "reused": 0, "failed": 0, "not_sent": 0}
    results: dict[tuple[str, str], dict] = {}
    # the one redaction path of every command that talks to an endpoint: the client's key (and
    # any credential in the URL) is removed from the journal, the result files and the terminal
    redactor = Redactor()
    client = ChatClient(spec, key_provider=key_provider, redactor=redactor)
    # bounds how many requests hold their encoded images at once
    gate = asyncio.Semaphore(max(1, spec.concurrency))
    fh = open_append(journal)

    async def one(q: Question, setting: str) -> None:
        maps = q.maps(setting, seed)
        async with gate:
            images = [ds.read_image(m) for m in maps]
            key = request_key(spec, q, maps, [sha256_hex(b) for b in images])
            prior = done.get((setting, q.ref))
            if prior is not None and prior.get("key") == key:
                counts["reused"] += 1
                results[(setting, q.ref)] = prior
                return
            out: Outcome = await client.complete(build_messages(q, images), sample=f"{setting}:{q.ref}")
        unsent = (out.error or {}).get("kind") == "not_sent"  # after the endpoint stopped the run
        counts["not_sent" if unsent else "sent"] += 1
        counts["failed"] += not out.ok
        rec = {
            "setting": setting,
            "question_ref": q.ref,
            "key": key,
            "maps": maps,
            "outcome": out.to_record(),
        }
        rec = redactor.value(rec)
        fh.write(json_line(rec))
        fh.flush()
        os.fsync(fh.fileno())  # a reply paid for is kept even if the run is killed next
        results[(setting, q.ref)] = rec

    try:
        await asyncio.gather(*(one(q, s) for q, s in jobs))
    finally:
        fh.close()
        await client.aclose()
    stop = client.health.stop
    return results, counts, (f"{stop.kind}: {stop.message}" if stop is not None else None)


def result_record(q: Question, setting: str, rec: dict | None, rules: str = RULE_SETS[0]) -> dict[str, Any]:
    """One FRIEDA result record; ``correct`` is the verdict by the frieda-score rule set ``rules``."""
    outcome = (rec or {}).get("outcome") or {}
    base = {**q.record(), "setting": setting, "image_urls": (rec or {}).get("maps", [])}
    if outcome.get("status") != "ok":
        base.update(_response=None, raw_response=None, extracted_ans=None)
        base["error"] = outcome.get("error") or {"kind": "not_sent"}
    else:
        answer, parts = final_answer(outcome.get("text"))
        base.update(_response=parts, raw_response=outcome.get("text"), extracted_ans=answer)
    verdict = score_by(rules, base)
    base.update(correct=verdict["verdict"] == "correct", verdict=verdict["verdict"], reason=verdict["reason"])
    return base


def run_frieda(
    dataset: str | Path,
    spec: ModelSpec,
    out_dir: str | Path,
    *,
    settings: list[str] | None = None,
    seed: int = 0,
    images: str | Path | None = None,
    limit: int | None = None,
    ids: list[str] | None = None,
    key_provider: KeyProvider | None = None,
    rules: str = RULE_SETS[0],
) -> dict[str, Any]:
    """Send, write the FRIEDA result files, score them; returns the frieda-score summary with the
    run's ``counts`` and ``stopped`` (why the endpoint stopped the run, or None)."""
    ds = load_dataset(dataset, images)
    settings = list(dict.fromkeys(settings or SETTINGS))
    bad = [s for s in settings if s not in SETTINGS]
    if bad:
        raise InputError(f"unknown setting {bad[0]!r} (expected {' or '.join(SETTINGS)})")
    questions = list(ds.questions)
    if ids:
        known = {q.ref for q in questions}
        missing = [i for i in ids if i not in known]
        if missing:
            raise InputError(f"--ids: no question {missing[0]!r} in {ds.source}")
        questions = [q for q in questions if q.ref in set(ids)]
    if limit is not None:
        if limit < 1:
            raise InputError(f"--limit: must be >= 1, got {limit}")
        questions = questions[:limit]
    out = Path(out_dir)
    _refuse_foreign(out)
    try:
        (out / RESULTS).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{out}: cannot create ({exc.strerror})") from None
    with RunDirLock(out, "frieda-run"):
        return _run_locked(ds, spec, out, settings, questions, seed, key_provider, rules)


def _refuse_foreign(out: Path) -> None:
    """OutputError when OUT is a directory frieda-run does not own (a benchmark, a run)."""
    for name in (RUN_MANIFEST, *TASK_FILES.values()):
        if (out / name).exists() or (out / name).is_symlink():
            raise OutputError(
                f"{out}: holds {name} (a benchmark or another command's run); "
                "give --out a directory of its own"
            )


def _run_locked(
    ds: Dataset,
    spec: ModelSpec,
    out: Path,
    settings: list[str],
    questions: list[Question],
    seed: int,
    key_provider: KeyProvider | None,
    rules: str,
) -> dict[str, Any]:
    jobs = [(q, s) for s in settings for q in questions]
    results, counts, stopped = asyncio.run(
        _send_all(ds, spec, jobs, seed, out / JOURNAL, key_provider or EnvKeyProvider())
    )
    files = []
    name = safe_name(spec.name)
    for s in settings:
        records = [result_record(q, s, results.get((s, q.ref)), rules) for q in questions]
        path = out / RESULTS / f"{name}_{SETTING_SUFFIX[s]}.json"
        write_json_atomic(path, records)
        files.append(path)
    summary = score_files(files, out, rules=rules)
    summary["counts"] = counts
    summary["stopped"] = stopped
    write_json_atomic(
        out / "run.json",
        {
            "dataset": str(ds.source),
            "images": str(ds.image_root),
            "questions": len(questions),
            "settings": settings,
            "order_seed": seed,
            "instructions_sha256": INSTRUCTIONS_SHA256,
            "model": spec.public_dict(),
            "counts": counts,
            "stopped": stopped,
        },
    )
    return summary


def cmd_frieda_run(args: argparse.Namespace) -> int:
    spec = spec_from_args(args)
    summary = run_frieda(
        args.dataset,
        spec,
        args.out,
        settings=args.setting,
        seed=args.order_seed,
        images=args.images,
        limit=args.limit,
        ids=args.ids,
        rules=args.rules,
    )
    print(format_table(summary))
    print()
    print(format_statistics(summary["statistics"]))
    c = summary["counts"]
    print(
        f"\n{c['sent']} sent, {c['reused']} reused, {c['failed']} failed -> {args.out}",
        file=sys.stderr,
    )
    if summary["stopped"]:
        print(f"run stopped by the endpoint ({summary['stopped']})", file=sys.stderr)
    if c["failed"] or summary["stopped"]:
        print("re-run the same command to retry the failed questions", file=sys.stderr)
        return 1
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "frieda-run",
        help="send a FRIEDA-format dataset to a model (direct/contextual) and score the answers",
        description="Send FRIEDA questions with their map images to a model endpoint, in the direct "
        "setting (the relevant maps) and/or the contextual one (all maps of the document, in a "
        "seeded shuffled order), write FRIEDA result files and score them like frieda-score. "
        "Re-running with the same --out resends only failed or changed requests.",
    )
    p.add_argument(
        "--dataset",
        required=True,
        type=Path,
        metavar="PATH",
        help="FRIEDA questions file (.json/.jsonl) or a directory holding questions.json and imgs/",
    )
    p.add_argument(
        "--images", type=Path, metavar="DIR", help="image folder (default: DATASET/imgs or DATASET)"
    )
    add_model_options(p)
    p.add_argument(
        "--setting",
        choices=SETTINGS,
        action="append",
        help="direct or contextual (repeatable; default: both)",
    )
    p.add_argument(
        "--order-seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of the contextual setting's map order (default 0)",
    )
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="output directory")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N questions")
    p.add_argument("--ids", nargs="+", metavar="REF", help="only these question_refs")
    p.add_argument(
        "--rules",
        choices=RULE_SETS,
        default=RULE_SETS[0],
        help="verdict rules, as in frieda-score (default: ours; frieda: the published verdicts' own)",
    )
    p.add_argument("--concurrency", type=int, metavar="N", help="override the model's concurrency")
    p.add_argument("--timeout", type=float, metavar="S", help="override the model's timeout_s")
    add_wait_option(p)
    add_generation_options(p)
    p.set_defaults(func=cmd_frieda_run)
