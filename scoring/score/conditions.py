"""Run conditions, tokens, latency, retries and cost of each run, read from its manifest and
journal at scoring time and kept in summary.json (`run_conditions`), so a report shows them
without the run directories.

Per run (one model x input type x task): the public endpoint URL (no credentials, no query), the
model id sent, each generation parameter as sent or "omitted", template versions, protocol,
benchmark hash, the tool's version and commit, start and end; from the journal's final records,
tokens in and out (`usage`; "not reported" when the server gave none for any request), latency
median and p95 (seconds, every final request), retries (every retry any request made) and, when
`price_in` / `price_out` (per million tokens) are configured, the cost."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from scoring.formats.rundir import PREDICTIONS
from scoring.runner.config import public_url
from scoring.runner.extract import read_extractions

NOT_REPORTED = "not reported"
OMITTED = "omitted"
GENERATION_PARAMS = (
    "temperature",
    "max_tokens",
    "max_completion_tokens",
    "top_p",
    "seed",
    "image_detail",
    "answer_format",
)
MILLION = 1_000_000


def _tokens(records: list[dict], key: str) -> int | str:
    values = [
        r["usage"][key]
        for r in records
        if isinstance(r.get("usage"), dict) and isinstance(r["usage"].get(key), int)
    ]
    return sum(values) if values else NOT_REPORTED


def _latency(records: list[dict]) -> dict[str, float | None]:
    v = np.array(
        [r["latency_s"] for r in records if isinstance(r.get("latency_s"), (int, float))], dtype=float
    )
    if v.size == 0:
        return {"latency_median_s": None, "latency_p95_s": None}
    return {
        "latency_median_s": round(float(np.median(v)), 4),
        "latency_p95_s": round(float(np.percentile(v, 95)), 4),
    }


def _cost(model: dict, tokens_in: int | str, tokens_out: int | str) -> float | str | None:
    """Cost in the price's currency; None when no price is configured, "not reported" when
    priced but the server gave no token counts."""
    p_in, p_out = model.get("price_in"), model.get("price_out")
    if p_in is None and p_out is None:
        return None
    if not isinstance(tokens_in, int) or not isinstance(tokens_out, int):
        return NOT_REPORTED
    return round(tokens_in * (p_in or 0) / MILLION + tokens_out * (p_out or 0) / MILLION, 6)


def _journal_records(path: Path) -> list[dict]:
    """The journal's readable records; an unreadable line was already reported when the run was
    scored (scoring.formats.rundir.read_records), so it is passed over here without a word."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for line in data.split(b"\n"):
        try:
            rec = json.loads(line) if line.strip() else None
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def run_conditions(run_dir: Path, manifest: dict, name: str) -> dict[str, Any]:
    """The conditions and usage figures of one run (see the module docstring)."""
    raw = manifest.get("model")
    model: dict[str, Any] = raw if isinstance(raw, dict) else {}
    journal = Path(run_dir) / PREDICTIONS
    records = _journal_records(journal)
    # a record re-keyed within its own journal (a checksum narrowed, #26) is no second request
    own = {r.get("key") for r in records}
    finals = [r for r in records if r.get("final") and r.get("cached_from") not in own]
    tokens_in, tokens_out = _tokens(finals, "prompt_tokens"), _tokens(finals, "completion_tokens")
    generation = {k: (OMITTED if model.get(k) is None else model.get(k)) for k in GENERATION_PARAMS}
    generation["answer_format"] = model.get("answer_format") or "text"  # recorded only when not text
    return {
        "run": str(run_dir),
        "model": name,
        "modality": manifest.get("modality"),
        "task": manifest.get("task"),
        "endpoint": public_url(str(model.get("base_url") or "")) if model.get("base_url") else None,
        "model_id": model.get("model"),
        "endpoint_models": manifest.get("endpoint_models") or [],
        "generation": generation,
        "templates": {k: (v or {}).get("version") for k, v in (manifest.get("templates") or {}).items()},
        "protocol": manifest.get("protocol"),
        "benchmark_sha256": manifest.get("benchmark_manifest_sha256"),
        "tool_version": manifest.get("tool_version"),
        "git_commit": manifest.get("git_commit"),
        "started_at": manifest.get("started_at"),
        "ended_at": manifest.get("ended_at"),
        "status": manifest.get("status"),
        "requests": len(finals),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        **_latency(finals),
        "retries": sum(sum((r.get("retries") or {}).values()) for r in records),
        "price_in": model.get("price_in"),
        "price_out": model.get("price_out"),
        "cost": _cost(model, tokens_in, tokens_out),
        **_with_extractor(run_dir, _cost(model, tokens_in, tokens_out)),
    }


def _with_extractor(run_dir: Path, cost: float | str | None) -> dict[str, Any]:
    """An extractor's requests, tokens and cost beside the run's (its cost added to the run's)."""
    lines = list(read_extractions(run_dir).values())
    if not lines:
        return {}
    usage = [x.get("usage") or {} for x in lines]
    t_in = sum(int(u.get("prompt_tokens") or 0) for u in usage)
    t_out = sum(int(u.get("completion_tokens") or 0) for u in usage)
    priced = [x for x in lines if x.get("price_in") is not None or x.get("price_out") is not None]
    extra = sum(
        int((x.get("usage") or {}).get("prompt_tokens") or 0) * (x.get("price_in") or 0) / MILLION
        + int((x.get("usage") or {}).get("completion_tokens") or 0) * (x.get("price_out") or 0) / MILLION
        for x in priced
    )
    out: dict[str, Any] = {"extractor": {"requests": len(lines), "tokens_in": t_in, "tokens_out": t_out}}
    out["extractor"]["cost"] = round(extra, 6) if priced else None
    if isinstance(cost, float) and priced:
        out["cost"] = round(cost + extra, 6)  # the run's cost, its extractor's calls included
    return out


def totals_by_model(conditions: Iterable[dict]) -> list[dict]:
    """Tokens, requests, retries and cost summed per model ("not reported" when any run of the
    model lacks token counts, so a sum never silently undercounts)."""
    by: dict[str, list[dict]] = {}
    for c in conditions:
        by.setdefault(c["model"], []).append(c)
    out = []
    for model in sorted(by):
        runs = by[model]
        total: dict[str, Any] = {"model": model, "runs": len(runs)}
        for k in ("requests", "retries"):
            total[k] = sum(c[k] for c in runs)
        for k in ("tokens_in", "tokens_out"):
            vals = [c[k] for c in runs]
            total[k] = sum(vals) if all(isinstance(v, int) for v in vals) else NOT_REPORTED
        priced = [c["cost"] for c in runs if c["cost"] is not None]
        if not priced:
            total["cost"] = None
        elif all(isinstance(v, float) for v in priced) and len(priced) == len(runs):
            total["cost"] = round(sum(priced), 6)
        else:
            total["cost"] = NOT_REPORTED
        out.append(total)
    return out


def flat_conditions(c: dict) -> dict:
    """One run's conditions as a flat CSV record (generation_<param>, templates as name=version)."""
    out = {k: v for k, v in c.items() if k not in ("generation", "templates", "endpoint_models")}
    out.update({f"generation_{k}": v for k, v in (c.get("generation") or {}).items()})
    out["endpoint_models"] = " ".join(c.get("endpoint_models") or [])
    out["templates"] = "; ".join(f"{k}={v}" for k, v in sorted((c.get("templates") or {}).items()))
    return out
