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
import hashlib
import json
import logging
import os
import platform
import tempfile
from importlib import metadata
from pathlib import Path

import scoring
from scoring.benchfiles import TASK_FILES, iter_instances, load_manifest, read_json, read_jsonl
from scoring.errors import InputError, OutputError
from scoring.score.tables import mcnemar_pairs, summary_cells, write_csv
from scoring.score.verdicts import score_prediction, set_precision_recall

log = logging.getLogger(__name__)
FORMAT = "spatialgap.scores/1"


def library_versions() -> dict:
    import numpy
    import pyproj
    import shapely

    out = {
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


def load_benchmark(bench_dir) -> tuple[dict, dict[str, dict[str, dict]]]:
    """(manifest, {task: {id: instance}}) of a benchmark directory."""
    manifest, sha = load_manifest(bench_dir)
    manifest["_sha256"] = sha
    tasks = {task: {i["id"]: i for i in iter_instances(bench_dir, (task,))} for task in TASK_FILES}
    return manifest, tasks


def _scene_key(instance: dict) -> str:
    return hashlib.sha256(json.dumps(instance.get("scene"), sort_keys=True).encode()).hexdigest()[:16]


def _load_run(run_dir: Path, bench_sha: str) -> tuple[dict, dict[str, dict]]:
    from scoring.runner.journal import final_predictions

    mpath, ppath = run_dir / "manifest.json", run_dir / "predictions.jsonl"
    if not mpath.is_file() or not ppath.is_file():
        raise InputError(f"{run_dir}: not a run directory (needs manifest.json and predictions.jsonl)")
    manifest = read_json(mpath)
    run_sha = manifest.get("benchmark_manifest_sha256")
    if run_sha and run_sha != bench_sha:
        raise InputError(
            f"{run_dir}: was run on another benchmark (manifest sha256 {run_sha[:12]}… "
            f"!= {bench_sha[:12]}…)"
        )
    return manifest, final_predictions(ppath)


def _model_name(manifest: dict) -> str:
    m = manifest.get("model") or {}
    if isinstance(m, dict):
        return str(m.get("name") or m.get("model") or "unknown")
    return str(m)


def score_run_rows(
    bench_dir,
    tasks: dict,
    run_dir: Path,
    manifest: dict,
    finals: dict[str, dict],
    only_recorded: bool = False,
    progress=None,
) -> list[dict]:
    model = _model_name(manifest)
    task = manifest.get("task")
    modality = manifest.get("modality")
    if task not in TASK_FILES or modality not in ("geojson", "image", "together"):
        raise InputError(f"{run_dir}/manifest.json: unknown task {task!r} or modality {modality!r}")
    forms = list(manifest.get("forms") or (["edit"] if task == "edit" else ["open", "mcq"]))
    instances = tasks[task]
    unknown = sorted({r.get("instance_id") for r in finals.values()} - set(instances))
    if unknown:
        raise InputError(
            f"{run_dir}: {len(unknown)} recorded instance(s) are not in the benchmark "
            f"(first: {unknown[0]})"
        )
    rows = []
    for iid, inst in instances.items():
        for form in forms:
            rec = finals.get(f"{iid}|{form}")
            if rec is None:
                if only_recorded:
                    continue
                rec = {
                    "status": "error",
                    "error": "no response recorded",
                    "task": task,
                    "form": form,
                    "modality": modality,
                }
            rec = {**rec, "task": task, "form": form, "modality": modality}
            v = score_prediction(inst, rec, bench_dir)
            if v.verdict == "error" and rec.get("error") == "no response recorded":
                v.reason = "no response recorded"
            row = {
                "id": iid,
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
                "answerable": bool((inst.get("answerable") or {}).get(modality, True)),
                "scene": _scene_key(inst),
                "value": v.value,
                "quality": v.quality,
                "run": str(run_dir),
                "attempt": rec.get("attempt"),
            }
            if task == "edit":
                row["screen"] = v.screen
                row["raster_tolerant"] = v.raster_tolerant
                if v.constraints is not None:
                    row["constraints_passed"] = sum(1 for c in v.constraints if c["passed"])
                    row["constraints_total"] = len(v.constraints)
            elif form == "open":
                pr = (
                    set_precision_recall(v.value, inst.get("answer"))
                    if v.verdict in ("correct", "wrong")
                    else None
                )
                if pr:
                    row["set_match"] = pr
            rows.append(row)
            if progress:
                progress.update(1)
    return rows


def _write_atomic(path: Path, data: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; results are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def score_runs(
    bench_dir,
    run_dirs: list,
    out_dir,
    *,
    progress: bool = False,
    only_recorded: bool = False,
    selfcheck: bool = True,
) -> dict:
    """Score every run against the benchmark, write RESULTS (verdicts.jsonl, summary.json/.csv)
    and return the summary."""
    if not run_dirs:
        raise InputError("no run directory given")
    bench_manifest, tasks = load_benchmark(bench_dir)
    loaded = []
    seen: dict[tuple, str] = {}
    for rd in run_dirs:
        rd = Path(rd)
        manifest, finals = _load_run(rd, bench_manifest["_sha256"])
        key = (_model_name(manifest), manifest.get("modality"), manifest.get("task"))
        for form in manifest.get("forms") or []:
            if (key, form) in seen:
                raise InputError(
                    f"{rd}: model {key[0]} / {key[1]} / {form} is already scored from {seen[(key, form)]}"
                )
            seen[(key, form)] = str(rd)
        loaded.append((rd, manifest, finals))
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{out}: cannot create ({exc.strerror})") from None

    selfcheck_result = None
    if selfcheck:
        from scoring.score.selfcheck import run_selfcheck

        msgs = run_selfcheck()
        selfcheck_result = {"passed": not msgs, "messages": msgs}
        if msgs:
            log.warning("selfcheck FAILED (%d drifted): %s", len(msgs), msgs[0])

    bar = None
    if progress:
        from tqdm import tqdm

        total = sum(
            len(tasks[m.get("task")] if m.get("task") in tasks else ()) * len(m.get("forms") or [1])
            for _, m, _ in loaded
        )
        bar = tqdm(total=total, unit="sample", desc="score")
    rows: list[dict] = []
    try:
        for rd, manifest, finals in loaded:
            rows.extend(score_run_rows(bench_dir, tasks, rd, manifest, finals, only_recorded, bar))
    finally:
        if bar:
            bar.close()

    cells = summary_cells(rows)
    summary = {
        "format": FORMAT,
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "benchmark": {
            "path": str(Path(bench_dir).resolve()),
            "manifest_sha256": bench_manifest["_sha256"],
            "city": bench_manifest.get("city"),
            "instances": {t: len(v) for t, v in tasks.items()},
        },
        "runs": [
            {
                "path": str(rd),
                "model": _model_name(m),
                "modality": m.get("modality"),
                "task": m.get("task"),
                "forms": m.get("forms"),
                "status": m.get("status"),
                "templates": m.get("templates"),
            }
            for rd, m, _ in loaded
        ],
        "scope": "recorded" if only_recorded else "benchmark",
        "versions": library_versions(),
        "selfcheck": selfcheck_result,
        "samples": len(rows),
        "cells": cells,
        "mcnemar": mcnemar_pairs(rows),
    }
    try:
        _write_atomic(
            out / "verdicts.jsonl",
            "".join(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n" for r in rows),
        )
        _write_atomic(
            out / "summary.json", json.dumps(summary, indent=1, ensure_ascii=False, allow_nan=False)
        )
        write_csv(cells, out / "summary.csv")
    except OSError as exc:
        raise OutputError(f"{out}: cannot write ({exc.strerror})") from None
    return summary


def load_results(results_dir) -> tuple[dict, list[dict]]:
    """(summary, verdict rows) of a RESULTS directory."""
    d = Path(results_dir)
    sp, vp = d / "summary.json", d / "verdicts.jsonl"
    if not sp.is_file() or not vp.is_file():
        raise InputError(f"{d}: not a results directory (needs summary.json and verdicts.jsonl)")
    return read_json(sp), _read_jsonl(vp)
