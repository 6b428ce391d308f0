"""The statistics FRIEDA reports, over our verdict lines (``files.score_files``):

mape
    Mean absolute percentage error of distance answers, ``100 * mean(|r - e| / |e|)`` over the
    distance records whose response and expected value were both read (in metres when both have a
    unit), per model, setting and spatial relationship (and ``ALL``), with the median beside it.
    Records without a readable value (no number, several numbers, unknown unit) are counted in
    ``unvalued``, never guessed; an expected value of 0 has no percentage error and is left out.
kappa
    Cohen's kappa between our verdicts (correct / not correct) and the records' own ``correct``,
    per model and setting and over all records: ``(p_o - p_e) / (1 - p_e)``. ``None`` when both
    raters put every record in the same class (p_e = 1: kappa is undefined).
mcnemar
    Paired McNemar tests between every two models in the same setting, on the questions both
    answered, with FRIEDA's rule (exact binomial test below 50 discordant pairs, chi-square with
    continuity correction from 50: ``scoring.score.stats.mcnemar``), once on our verdicts and
    once on the original ones; Holm-adjusted p-values within each setting and verdict source.
setting_agreement
    Per model, the share of questions answered in both settings whose verdict is the same in the
    direct (``wo_contextual``) and the contextual (``w_contextual``) setting, on our verdicts and
    on the original ones; ``overall`` pools every model's paired questions, ``mean`` averages the
    per-model shares (FRIEDA reports 88.03 %).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations
from statistics import median
from typing import Any

from scoring.score.stats import holm, mcnemar

MCNEMAR_RULE = "frieda"
DIRECT, CONTEXTUAL = "wo_contextual", "w_contextual"
SETTING_NAMES = {DIRECT: "direct", CONTEXTUAL: "contextual"}
ALL = "ALL"


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa of two binary ratings of the same items (None when undefined)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} ratings against {len(b)}")
    n = len(a)
    if n == 0:
        return None
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(map(bool, a)) / n, sum(map(bool, b)) / n
    p_e = pa * pb + (1 - pa) * (1 - pb)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1 - p_e)


def absolute_percentage_errors(pairs: Iterable[tuple[float, float]]) -> list[float]:
    """``100 * |r - e| / |e|`` of each (response, expected) pair; expected 0 is skipped."""
    return [100 * abs(r - e) / abs(e) for r, e in pairs if e != 0]


def mape(pairs: Iterable[tuple[float, float]]) -> tuple[float | None, int]:
    """(MAPE in percent, number of pairs used) of (response, expected) pairs; expected 0 skipped."""
    errors = absolute_percentage_errors(pairs)
    if not errors:
        return None, 0
    return sum(errors) / len(errors), len(errors)


def _r(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(x, digits)


def _correct(line: dict) -> bool:
    return line.get("verdict") == "correct"


def _mape_rows(lines: list[dict]) -> list[dict]:
    groups: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for ln in lines:
        if ln.get("answer_type") != "distance":
            continue
        for rel in (str(ln.get("spatial_relationship")), ALL):
            groups[(ln["model"], ln["setting"], rel)].append(ln)
    rows = []
    for (model, setting, rel), grp in sorted(groups.items()):
        pairs = [
            (ln["response_value"], ln["expected_value"])
            for ln in grp
            if isinstance(ln.get("response_value"), (int, float))
            and isinstance(ln.get("expected_value"), (int, float))
        ]
        errors = absolute_percentage_errors(pairs)
        # the mean is FRIEDA's figure; one absurd reply (a 200-digit number) dominates it, so the
        # median is given beside it
        value = sum(errors) / len(errors) if errors else None
        if value is not None and not math.isfinite(value):
            value = None  # errors beyond float range: no honest mean (the median is still given)
        rows.append(
            {
                "model": model,
                "setting": setting,
                "relation": rel,
                "n": len(grp),
                "valued": len(errors),
                "unvalued": len(grp) - len(pairs),
                "mape": _r(value, 2),
                "median_ape": _r(float(median(errors)), 2) if errors else None,
            }
        )
    return rows


def _kappa_rows(lines: list[dict]) -> list[dict]:
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for ln in lines:
        groups[(ln["model"], ln["setting"])].append(ln)
    groups[(ALL, "")] = lines
    rows = []
    for (model, setting), grp in groups.items():
        ours = [_correct(ln) for ln in grp]
        orig = [bool(ln.get("original_correct")) for ln in grp]
        agree = sum(x == y for x, y in zip(ours, orig, strict=True))
        rows.append(
            {
                "model": model,
                "setting": setting,
                "n": len(grp),
                "agreement": _r(agree / len(grp)) if grp else None,
                "kappa": _r(cohen_kappa(ours, orig)),
            }
        )
    return rows


def _by_question(lines: list[dict]) -> dict[tuple[str, str], dict[str, dict]]:
    """{(model, setting): {question_ref: line}}. A record without a question_ref, or whose
    question_ref occurs more than once in its file (the published GLM-4.5V files repeat 46), cannot
    be paired unambiguously and is left out of the paired statistics."""
    seen: dict[tuple[str, str], dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for ln in lines:
        ref = ln.get("question_ref")
        if ref is not None:
            seen[(ln["model"], ln["setting"])][str(ref)].append(ln)
    return {key: {q: g[0] for q, g in refs.items() if len(g) == 1} for key, refs in seen.items()}


def _mcnemar_pairs(lines: list[dict]) -> list[dict]:
    per = _by_question(lines)
    settings = sorted({s for _, s in per})
    rows: list[dict] = []
    for source, key in (("ours", None), ("original", "original_correct")):
        for setting in settings:
            models = sorted(m for m, s in per if s == setting)
            block = []
            for a, b in combinations(models, 2):
                qa, qb = per[(a, setting)], per[(b, setting)]
                common = sorted(set(qa) & set(qb))
                if not common:
                    continue
                if key is None:
                    xa, xb = [_correct(qa[q]) for q in common], [_correct(qb[q]) for q in common]
                else:
                    xa = [bool(qa[q].get(key)) for q in common]
                    xb = [bool(qb[q].get(key)) for q in common]
                res = mcnemar(xa, xb, MCNEMAR_RULE)
                block.append(
                    {
                        "verdicts": source,
                        "setting": setting,
                        "first": a,
                        "second": b,
                        "n": res["n"],
                        "only_first": res["only_first"],
                        "only_second": res["only_second"],
                        "diff_points": res["diff_points"],
                        "test": res["test"],
                        "p_value": res["p_value"],
                    }
                )
            for row, adj in zip(block, holm([r["p_value"] for r in block]), strict=True):
                row["p_holm"] = adj
            rows.extend(block)
    return rows


def _setting_agreement(lines: list[dict]) -> dict[str, Any]:
    per = _by_question(lines)
    models = sorted({m for m, s in per if s == DIRECT} & {m for m, s in per if s == CONTEXTUAL})
    rows = []
    shares: list[tuple[float, float]] = []  # unrounded, for the mean
    pooled = {"n": 0, "ours": 0, "original": 0}
    for m in models:
        d, c = per[(m, DIRECT)], per[(m, CONTEXTUAL)]
        common = sorted(set(d) & set(c))
        same_ours = sum(_correct(d[q]) == _correct(c[q]) for q in common)
        same_orig = sum(
            bool(d[q].get("original_correct")) == bool(c[q].get("original_correct")) for q in common
        )
        n = len(common)
        rows.append(
            {
                "model": m,
                "n": n,
                "ours": _r(same_ours / n) if n else None,
                "original": _r(same_orig / n) if n else None,
            }
        )
        if n:
            shares.append((same_ours / n, same_orig / n))
        pooled["n"] += n
        pooled["ours"] += same_ours
        pooled["original"] += same_orig
    n = pooled["n"]
    return {
        "models": rows,
        "overall": {
            "n": n,
            "ours": _r(pooled["ours"] / n) if n else None,
            "original": _r(pooled["original"] / n) if n else None,
        },
        "mean": {
            "models": len(shares),
            "ours": _r(sum(o for o, _ in shares) / len(shares)) if shares else None,
            "original": _r(sum(g for _, g in shares) / len(shares)) if shares else None,
        },
    }


def frieda_statistics(lines: Iterable[dict]) -> dict[str, Any]:
    """MAPE, kappa, McNemar pairs and direct/contextual agreement over verdict lines (each with
    model, setting, question_ref, answer_type, spatial_relationship, verdict, original_correct
    and, for distances, response_value and expected_value)."""
    lines = list(lines)
    return {
        "mape": _mape_rows(lines),
        "kappa": _kappa_rows(lines),
        "mcnemar": {"rule": MCNEMAR_RULE, "pairs": _mcnemar_pairs(lines)},
        "setting_agreement": _setting_agreement(lines),
    }


def format_statistics(stats: dict[str, Any], mcnemar_verdicts: str = "ours") -> str:
    """The statistics as text: MAPE (ALL relations, then each), kappa, McNemar pairs on
    ``mcnemar_verdicts`` ("ours" or "original"), direct/contextual agreement."""

    def pct(x: float | None, width: int = 7) -> str:
        return f"{'-':>{width}}" if x is None else f"{100 * x:>{width - 1}.1f}%"

    def num(x: float | None) -> str:
        return f"{'-':>9}" if x is None else f"{x:>9.4g}"

    out = ["Distance answers: MAPE and median APE (%), valued/n"]
    for row in stats["mape"]:
        out.append(
            f"  {row['model']:<24} {row['setting']:<14} {row['relation']:<14} MAPE {num(row['mape'])}"
            f"  median {num(row['median_ape'])}  ({row['valued']}/{row['n']})"
        )
    out += ["", "Cohen's kappa, our verdicts vs the records' own"]
    for row in stats["kappa"]:
        k = "-" if row["kappa"] is None else f"{row['kappa']:.3f}"
        out.append(
            f"  {row['model']:<24} {row['setting']:<14} n={row['n']:<6} kappa={k:>6}  "
            f"agreement={pct(row['agreement'])}"
        )
    pairs = [p for p in stats["mcnemar"]["pairs"] if p["verdicts"] == mcnemar_verdicts]
    out += [
        "",
        f"McNemar between models ({mcnemar_verdicts} verdicts; exact below 50 discordant, else chi2-cc)",
    ]
    for p in pairs:
        star = "*" if p["p_holm"] < 0.05 else " "
        out.append(
            f"  {p['setting']:<14} {p['first']:<22} vs {p['second']:<22} n={p['n']:<4} "
            f"b={p['only_first']:<4} c={p['only_second']:<4} {p['test']:<7} p={p['p_value']:.3g} "
            f"holm={p['p_holm']:.3g}{star}"
        )
    sa = stats["setting_agreement"]
    out += ["", "Per-question agreement, direct vs contextual (ours / original)"]
    for row in sa["models"]:
        out.append(f"  {row['model']:<24} n={row['n']:<5} {pct(row['ours'])} / {pct(row['original'])}")
    if sa["models"]:
        o, m = sa["overall"], sa["mean"]
        out.append(f"  {'pooled':<24} n={o['n']:<5} {pct(o['ours'])} / {pct(o['original'])}")
        out.append(f"  {'mean of models':<24} m={m['models']:<5} {pct(m['ours'])} / {pct(m['original'])}")
    return "\n".join(out)
