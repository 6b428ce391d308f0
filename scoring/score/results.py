"""`spatialgap score`: recorded runs -> RESULTS directory.

RESULTS/
    verdicts.jsonl   one line per sample: id, model, task, modality, form, verdict, reason, ...
    summary.json     cells of every level, McNemar pairs, runs, library versions, selfcheck
    summary.csv      the same cells, flat

Nothing is dropped from a denominator: every sample of the benchmark in a run's scope (task x
forms) gets a verdict; one the run has no final record for is an "error" ("no response
recorded") unless `only_recorded` narrows the scope to the samples the run recorded.
"""

from __future__ import annotations

import datetime as _dt
import functools
import gc
import json
import logging
import platform
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, cast

import numpy
import pyproj
import shapely

import scoring
from scoring.errors import InputError, OutputError
from scoring.execute import Executor, LocalExecutor
from scoring.formats.benchmark import Benchmark
from scoring.formats.records import Instance
from scoring.formats.rundir import PREDICTIONS, load_run, repeat_id, sample_id
from scoring.runner.extract import extraction_for, read_extractions
from scoring.score.agreement import first_samples, repeated, sample_agreement
from scoring.score.conditions import run_conditions
from scoring.score.gap import modality_gap_tests
from scoring.score.records import VerdictRow
from scoring.score.refusal import refusal_files
from scoring.score.selfcheck import run_selfcheck
from scoring.score.stats import order_agreement
from scoring.score.tables import cells_csv, mcnemar_pairs, summary_cells
from scoring.score.verdicts import INTERNAL_ERROR, answerable_in, score_prediction
from scoring.support.files import dumps_safe, read_json, read_jsonl, sha256_file, sha256_hex, write_set
from scoring.support.lock import lock_output
from scoring.support.memo import IdentityMemo
from scoring.vocab import MODALITIES, TASKS, VERDICTS, AnswerType, Form, Task, Verdict, forms_of

log = logging.getLogger(__name__)
FORMAT = "spatialgap.scores/1"
NOT_RECORDED = "no response recorded"


def library_versions() -> dict:
    out: dict[str, str | None] = {
        "spatialgap": scoring.__version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "shapely": shapely.__version__,
        "geos": shapely.geos_version_string,
        "pyproj": pyproj.__version__,
        "proj": pyproj.proj_version_str,
    }
    for dist in ("scipy", "matplotlib", "jinja2"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _read_jsonl(path: Path) -> list[dict]:
    return [value for _, value in read_jsonl(path)]


def _scene_key_of(instance: Instance) -> str:
    """Which scene a sample was asked about (paired tests pair samples of one scene). Not
    canonical_json: these bytes fix the keys already in recorded verdicts."""
    return sha256_hex(json.dumps(instance.get("scene"), sort_keys=True))[:16]


_scene_key = IdentityMemo(_scene_key_of, maxsize=8192)  # once per instance, not per sample


def _model_name(manifest: dict) -> str:
    m = manifest.get("model") or {}
    if isinstance(m, dict):
        return str(m.get("name") or m.get("model") or "unknown")
    return str(m)


def _run_scope(run_dir: Path, manifest: dict) -> tuple[Task, str, list[str]]:
    """(task, modality, forms) a run covers; InputError for a manifest naming unknown ones."""
    task, modality = manifest.get("task"), manifest.get("modality")
    if task not in TASKS or modality not in MODALITIES:
        raise InputError(f"{run_dir}/manifest.json: unknown task {task!r} or modality {modality!r}")
    return Task(task), str(modality), list(manifest.get("forms") or forms_of(task))


def _missing_record(task: str, form: str, modality: str) -> dict:
    return {"status": "error", "error": NOT_RECORDED, "task": task, "form": form, "modality": modality}


def score_run_rows(
    bench: Benchmark,
    run_dir: Path,
    manifest: dict,
    finals: dict[str, dict],
    only_recorded: bool = False,
    progress: Any = None,
) -> list[dict]:
    """One verdict row per sample of the run's scope (see the module docstring)."""
    task, modality, forms = _run_scope(run_dir, manifest)
    instances = bench.instances[task]
    unknown = sorted({str(r.get("instance_id")) for r in finals.values()} - set(instances))
    if unknown:
        raise InputError(
            f"{run_dir}: {len(unknown)} recorded instance(s) are not in the benchmark (first: {unknown[0]})"
        )
    model = _model_name(manifest)
    repeats = _repeats(manifest)
    extractions = read_extractions(run_dir)
    rows = []
    for iid, inst in instances.items():
        for form in forms:
            for k in range(repeats):
                rec = finals.get(repeat_id(sample_id(iid, form), k))
                if rec is None and only_recorded:
                    continue
                rec = {**(rec or _missing_record(task, form, modality)), "task": task, "form": form}
                rec["modality"] = modality
                row = _row(bench, inst, rec, model, run_dir, extractions)
                if repeats > 1:  # each sample's verdict, the repeat named (a run of one: rows as before)
                    row["sample_index"] = k
                rows.append(row)
                if progress:
                    progress.update(1)
    return rows


def extractor_effect(rows: list[dict]) -> list[dict]:
    """Per model read by an extractor: the figure by the rules alone beside the assisted one (a
    reply the extractor read counts as unparsed by the rules)."""
    out = []
    for model in sorted({r["model"] for r in rows if "read_by" in r}):
        mine = [r for r in rows if r["model"] == model and "read_by" in r]
        assisted = sum(r["verdict"] in (Verdict.CORRECT, Verdict.CORRECT_REFUSAL) for r in mine)
        by_extractor = [r for r in mine if r["read_by"] == "extractor"]
        extra = sum(r["verdict"] in (Verdict.CORRECT, Verdict.CORRECT_REFUSAL) for r in by_extractor)
        n = len(mine)
        out.append(
            {
                "model": model,
                "samples": n,
                "correct_rules_only": assisted - extra,
                "correct_assisted": assisted,
                "read_by_extractor": len(by_extractor),
                "accuracy_rules_only": (assisted - extra) / n if n else None,
                "accuracy_assisted": assisted / n if n else None,
            }
        )
    return out


def _repeats(manifest: dict) -> int:
    """How often the run asked each sample (its model's `samples`; 1 unless it says more)."""
    n = manifest.get("samples", 1)
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else 1


def _row(
    bench: Benchmark, inst: Instance, rec: dict, model: str, run_dir: Path, extractions: Mapping[str, dict]
) -> dict:
    task, form, modality = rec["task"], rec["form"], rec["modality"]
    v = score_prediction(inst, rec, bench.path)
    read_by = "rules"
    extracted = extraction_for(extractions, rec) if v.verdict == Verdict.UNPARSED else None
    if extracted is not None:  # the extractor model's reading of a reply the rules left unparsed
        again = score_prediction(inst, {**rec, "text": extracted}, bench.path)
        if again.verdict != Verdict.UNPARSED:
            v, read_by = again, "extractor"
    if v.verdict == Verdict.ERROR and rec.get("error") == NOT_RECORDED:
        v.reason = NOT_RECORDED
    row: VerdictRow = {
        "id": inst["id"],
        "model": model,
        "task": task,
        "modality": modality,
        "form": form,
        "verdict": v.verdict,
        "reason": v.reason,
        "city": inst.get("city"),
        "relation": inst.get("relation"),
        "family": inst.get("family"),
        "answer_type": inst.get("answer_type") or "edit",
        # answerable as the verdicts judge it (one verdict per reply: a refusal of a paper O06 GeoJSON
        # item is `wrong` there and a false refusal here); whether the input carried what the
        # answer needs is the paper's information-sufficient score's business (Table 1)
        "answerable": answerable_in(inst, modality),
        "scene": _scene_key(inst),
        "value": v.value,
        "quality": v.quality,
        "run": str(run_dir),
        "attempt": rec.get("attempt"),
    }
    if task == Task.EDIT:
        row["screen"] = v.screen
        row["raster_tolerant"] = v.raster_tolerant
        if v.constraints is not None:
            row["constraints_passed"] = sum(1 for c in v.constraints if c["passed"])
            row["constraints_total"] = len(v.constraints)
            # the constraint kinds (measures) this edit missed, for the failure analysis
            row["constraints_missed"] = [str(c.get("measure")) for c in v.constraints if not c["passed"]]
            row["constraint_kinds"] = [str(c.get("measure")) for c in v.constraints]
    elif (
        form == Form.OPEN
        and inst.get("answer_type") == AnswerType.ORDERING
        and v.verdict in (Verdict.CORRECT, Verdict.WRONG)
    ):
        agreement = order_agreement(v.value, inst.get("answer"))
        if agreement:
            row["order_match"] = agreement
    if extractions:  # the runs an extractor read say who read each reply
        row["read_by"] = read_by
    return cast(dict, row)  # the tables read rows as plain dicts


def score_run_shard(shard: tuple[Path, dict, dict[str, dict], bool], bench: Benchmark) -> list[dict]:
    """The verdict rows of one run (a shard of `score_runs`)."""
    rd, manifest, finals, only_recorded = shard
    if manifest.get("task") == Task.EDIT and manifest.get("modality") == "image":
        # image edits are measured through each map's recorded transform, read from the maps
        if not (bench.path / "maps").is_dir():
            raise InputError(f"{bench.path}/maps: not readable where {rd} is scored (share the benchmark)")
    return score_run_rows(bench, rd, manifest, finals, only_recorded)


Fingerprint = tuple[int, int]  # (size, mtime_ns) of a run's journal


def journal_fingerprint(run_dir: str | Path) -> Fingerprint:
    st = (Path(run_dir) / PREDICTIONS).stat()
    return st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=2)
def _bench_at(path: str, manifest_mtime_ns: int) -> Benchmark:
    return Benchmark.open(path)


def score_run_dir(bench_dir: str | Path, run_dir: str | Path, only_recorded: bool = False) -> tuple:
    """(fingerprint of the journal read, verdict rows) of one finished run, scored on its own (a
    sweep scores each run while the others go on); `score_runs(prescored=...)` takes the rows
    only while the journal is unchanged."""
    fingerprint = journal_fingerprint(run_dir)
    bench_dir = Path(bench_dir)
    bench = _bench_at(str(bench_dir), (bench_dir / "manifest.json").stat().st_mtime_ns)
    manifest, finals = load_run(Path(run_dir), bench.sha256)
    return fingerprint, score_run_shard((Path(run_dir), manifest, finals, only_recorded), bench)


def _load_runs(
    bench: Benchmark, run_dirs: list, prescored: Mapping[str, tuple]
) -> tuple[list[tuple[Path, dict, dict[str, dict] | None]], dict[str, list[dict]]]:
    """((run dir, manifest, finals) of each run, rows of the runs prescored from their unchanged
    journal: those are not read again, their finals are None); InputError when two runs cover the
    same model, modality and form (one of them would be scored twice)."""
    loaded: list[tuple[Path, dict, dict[str, dict] | None]] = []
    ready: dict[str, list[dict]] = {}
    seen: dict[tuple, str] = {}
    for rd in map(Path, run_dirs):
        done = prescored.get(str(rd))
        unchanged = done is not None and (rd / PREDICTIONS).is_file() and done[0] == journal_fingerprint(rd)
        manifest, finals = load_run(rd, bench.sha256, finals=not unchanged)
        if unchanged and done is not None:
            ready[str(rd)] = done[1]
        key = (_model_name(manifest), manifest.get("modality"), manifest.get("task"))
        for form in manifest.get("forms") or []:
            if (key, form) in seen:
                raise InputError(
                    f"{rd}: model {key[0]} / {key[1]} / {form} is already scored from {seen[(key, form)]}"
                )
            seen[(key, form)] = str(rd)
        loaded.append((rd, manifest, None if unchanged else finals))
    return loaded, ready


def _n_samples(bench: Benchmark, manifest: dict) -> int:
    task = manifest.get("task")
    n = len(bench.instances[Task(task)]) if task in TASKS else 0
    return n * len(manifest.get("forms") or [1]) * _repeats(manifest)


def _selfcheck() -> dict:
    msgs = run_selfcheck()
    if msgs:
        log.warning("selfcheck FAILED (%d drifted): %s", len(msgs), msgs[0])
    return {"passed": not msgs, "messages": msgs}


def score_runs(
    bench: Benchmark | str | Path,
    run_dirs: list,
    out_dir: str | Path,
    *,
    progress: bool = False,
    only_recorded: bool = False,
    selfcheck: bool = True,
    mcnemar_rule: str = "exact",
    executor: Executor | None = None,
    prescored: Mapping[str, tuple] | None = None,
) -> dict:
    """Score every run against the benchmark, write RESULTS (verdicts.jsonl, summary.json/.csv)
    and return the summary. `mcnemar_rule`: "exact" or "frieda" for the paired tests.
    `executor`: where the runs are scored, one shard each (default: here, one after the other).
    `prescored`: run dir -> what `score_run_dir` returned for it, used if its journal is unchanged."""
    if not run_dirs:
        raise InputError("no run directory given")
    bench = bench if isinstance(bench, Benchmark) else Benchmark.open(bench)
    loaded, ready = _load_runs(bench, run_dirs, prescored or {})
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{out}: cannot create ({exc.strerror})") from None
    with lock_output(out, "score"):  # two scores into one RESULTS would interleave their sets
        selfcheck_result = _selfcheck() if selfcheck else None
        rows = _scored_rows(bench, loaded, ready, only_recorded, executor, progress)
        summary = _summary(bench, loaded, rows, only_recorded, selfcheck_result, mcnemar_rule)
        if repeated(rows):
            summary["sample_agreement"] = sample_agreement(rows)
        if any("read_by" in r for r in rows):
            summary["extractor"] = extractor_effect(rows)
        verdicts = "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in rows)
        # the set's parts belong together: the summary names the verdicts' bytes (load_results checks)
        summary["verdicts_sha256"] = sha256_hex(verdicts)
        write_set(
            out,
            {
                "verdicts.jsonl": verdicts,
                "summary.json": dumps_safe(summary, indent=1) + "\n",
                "summary.csv": cells_csv(summary["cells"]),
                **refusal_files(rows),  # scoring/score/refusal.py
            },
        )
    return summary


def _scored_rows(
    bench: Benchmark,
    loaded: list[tuple[Path, dict, dict[str, dict] | None]],
    ready: dict[str, list[dict]],
    only_recorded: bool,
    executor: Executor | None,
    progress: bool,
) -> list[dict]:
    """Every verdict row, in the runs' order: the prescored runs' from `ready`, the others scored
    on `executor`, one shard a run."""
    rows: list[dict] = []
    # the runs not prescored (their journals read above)
    todo = [(rd, m, finals, only_recorded) for rd, m, finals in loaded if finals is not None]
    # The benchmark and the journals live until scoring ends: out of the collector's sight, a full
    # collection no longer walks their millions of objects in the middle of one sample's scoring.
    # Unfrozen after, so a long-lived caller (QGIS) keeps collecting its own cycles.
    gc.freeze()
    try:
        scored = (executor or LocalExecutor(1)).map(
            score_run_shard,
            todo,
            shared=bench,
            desc="score",
            unit="sample",
            progress=progress,  # a bar only for the command line; the plugin scores without one
            weights=[_n_samples(bench, m) for _, m, _, _ in todo],
        )
        for shard, run_rows in zip(todo, scored, strict=True):
            ready[str(shard[0])] = run_rows
        for rd, _, _ in loaded:  # in the runs' order, wherever and whenever they were scored
            rows.extend(ready[str(rd)])
    finally:
        gc.unfreeze()
    return rows


def _summary(
    bench: Benchmark,
    loaded: list[tuple[Path, dict, dict[str, dict] | None]],
    rows: list[dict],
    only_recorded: bool,
    selfcheck_result: dict | None,
    mcnemar_rule: str,
) -> dict:
    """summary.json's content: the benchmark, the runs and their conditions, the cells and the
    paired tests."""
    cells = summary_cells(rows)
    return {
        "format": FORMAT,
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "benchmark": {
            "path": str(bench.path.resolve()),
            "manifest_sha256": bench.sha256,
            "city": bench.manifest.get("city"),
            "protocol": bench.protocol,
            "instances": {t: len(v) for t, v in bench.instances.items()},
            "options_only": bench.manifest.get("options_only"),  # the build's baseline (scoring.build.blind)
        },
        "runs": [
            {
                "path": str(rd),
                "model": _model_name(m),
                "modality": m.get("modality"),
                "task": m.get("task"),
                "protocol": m.get("protocol") or bench.protocol,
                "forms": m.get("forms"),
                "status": m.get("status"),
                "templates": m.get("templates"),
            }
            for rd, m, _ in loaded
        ],
        # per run: endpoint, model id, generation parameters, templates, tokens, latency, cost
        "run_conditions": [run_conditions(rd, m, _model_name(m)) for rd, m, _ in loaded],
        "scope": "recorded" if only_recorded else "benchmark",
        "versions": library_versions(),
        "selfcheck": selfcheck_result,
        "samples": len(rows),
        # samples whose scoring raised: each is an "error" verdict naming the exception
        "internal_errors": sum(1 for r in rows if str(r.get("reason") or "").startswith(INTERNAL_ERROR)),
        # accuracy with repeated samples: each item's N verdicts count once each (the mean per item,
        # then over items); the paired tests pair each item's first sample
        "cells": cells,
        "mcnemar": mcnemar_pairs(first_samples(rows), mcnemar_rule),
        # each model's input types against each other on the same samples (Holm-adjusted)
        "modality_gap": modality_gap_tests(first_samples(rows), mcnemar_rule),
    }


def load_results(results_dir: str | Path) -> tuple[dict, list[dict]]:
    """(summary, verdict rows) of a RESULTS directory."""
    d = Path(results_dir)
    sp, vp = d / "summary.json", d / "verdicts.jsonl"
    if not sp.is_file() or not vp.is_file():
        raise InputError(f"{d}: not a results directory (needs summary.json and verdicts.jsonl)")
    summary = read_json(sp)
    check_set(d, summary)
    return summary, [_verdict_row(row, vp, i) for i, row in enumerate(_read_jsonl(vp), 1)]


def check_set(results_dir: Path, summary: Any) -> None:
    """InputError unless RESULTS' verdicts.jsonl is the one its summary.json was written with
    (a set half replaced: a score killed between its renames, files copied from two scores).
    A summary written before the hash was recorded is taken as it is."""
    want = summary.get("verdicts_sha256") if isinstance(summary, dict) else None
    if want is not None and sha256_file(results_dir / "verdicts.jsonl") != want:
        raise InputError(
            f"{results_dir}: summary.json and verdicts.jsonl are not from the same score "
            "(re-run spatialgap score into this directory)"
        )


def _verdict_row(row: dict, path: Path, line: int) -> dict:
    """A row read from verdicts.jsonl, its verdict a `Verdict` (the one place the word is read)."""
    try:
        row["verdict"] = Verdict(row["verdict"])
    except (KeyError, ValueError, TypeError):
        raise InputError(
            f"{path}:{line}: verdict {row.get('verdict')!r} is not one of {', '.join(VERDICTS)}"
        ) from None
    return row  # the rest of the row is as score_runs wrote it (a VerdictRow)
