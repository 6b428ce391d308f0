"""`spatialgap report RESULTS... --out report.html`: one self-contained HTML file (jinja2 template
in resources/report/, figures as embedded PNG data URIs drawn with matplotlib's Agg renderer, without pyplot).

Cells are recomputed from the verdicts of all RESULTS together, with the same code as the
summary (scoring.score.tables), so a report of one RESULTS matches its summary.json exactly."""

from __future__ import annotations

import base64
import datetime as _dt
import io
import os
import tempfile
from collections import defaultdict
from pathlib import Path

from matplotlib.figure import Figure  # no pyplot: no global backend state (safe inside QGIS)

from scoring.errors import InputError, OutputError
from scoring.paths import RESOURCES_DIR
from scoring.score.results import _umask, load_results
from scoring.score.tables import mcnemar_pairs, summary_cells

FORMS = ("open", "mcq", "edit")
FORM_LABELS = {"open": "open", "mcq": "MCQ-4", "edit": "edit (CSR)"}
MODALITIES = ("geojson", "image", "together")


def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def _figure_uri(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _ordered(values, order=()):
    vals = set(v for v in values if v)
    return [v for v in order if v in vals] + sorted(vals - set(order))


def _fig_family_bars(cells, models, families):
    fam = [c for c in cells if c["level"] == "family"]
    forms = _ordered((c["form"] for c in fam), FORMS)
    if not fam:
        return None
    fig = Figure(figsize=(4.2 * len(forms), 2.8 * len(models)))
    axes = fig.subplots(len(models), len(forms), squeeze=False, sharey=True)
    for i, model in enumerate(models):
        for j, form in enumerate(forms):
            ax = axes[i][j]
            mods = _ordered(
                (c["modality"] for c in fam if c["model"] == model and c["form"] == form), MODALITIES
            )
            width = 0.8 / max(1, len(mods))
            for k, mod in enumerate(mods):
                xs, ys, lo, hi = [], [], [], []
                for f_i, f in enumerate(families):
                    c = next(
                        (
                            c
                            for c in fam
                            if (c["model"], c["form"], c["modality"], c["family"]) == (model, form, mod, f)
                        ),
                        None,
                    )
                    if c is None or c["accuracy"] is None:
                        continue
                    xs.append(f_i + (k - (len(mods) - 1) / 2) * width)
                    ys.append(c["accuracy"])
                    lo.append(c["accuracy"] - (c["ci_low"] or c["accuracy"]))
                    hi.append((c["ci_high"] or c["accuracy"]) - c["accuracy"])
                ax.bar(xs, ys, width=width, yerr=[lo, hi], capsize=2, label=mod)
            ax.set_xticks(range(len(families)), families, fontsize=8)
            ax.set_ylim(0, 1.05)
            ax.set_title(f"{model} · {FORM_LABELS.get(form, form)}", fontsize=9)
            if mods:
                ax.legend(fontsize=7)
    fig.suptitle("Accuracy by family and modality (95 % intervals)", fontsize=10)
    fig.tight_layout()
    return _figure_uri(fig)


def _fig_heatmap(cells, relations, columns):
    import numpy as np

    rel = {
        (c["relation"], c["model"], c["modality"], c["form"]): c for c in cells if c["level"] == "relation"
    }
    if not rel or not columns:
        return None
    data = np.full((len(relations), len(columns)), np.nan)
    for i, r in enumerate(relations):
        for j, col in enumerate(columns):
            c = rel.get((r, *col))
            if c and c["accuracy"] is not None:
                data[i, j] = 1 - c["accuracy"]
    fig = Figure(figsize=(1.0 + 0.55 * len(columns), 0.28 * len(relations) + 1.6))
    ax = fig.subplots()
    # grey, not white, where a relation has no instances: white would read as "no errors"
    import matplotlib

    cmap = matplotlib.colormaps["Reds"].copy()
    cmap.set_bad("#c8c8c8")
    im = ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    ax.set_yticks(range(len(relations)), relations, fontsize=7)
    ax.set_xticks(range(len(columns)), [" · ".join(c) for c in columns], rotation=60, ha="right", fontsize=7)
    fig.colorbar(im, ax=ax, label="error rate", shrink=0.6)
    ax.set_title("Error rate per relation (grey: no instances)", fontsize=10)
    return _figure_uri(fig)


def _fig_city_ranges(cells, rows_keys, cities):
    city = {(c["model"], c["modality"], c["form"], c["city"]): c for c in cells if c["level"] == "city"}
    if len(cities) < 2:
        return None
    fig = Figure(figsize=(7, 0.35 * len(rows_keys) + 1.2))
    ax = fig.subplots()
    for i, key in enumerate(rows_keys):
        vals = [(ct, city[(*key, ct)]["accuracy"]) for ct in cities if (*key, ct) in city]
        vals = [(ct, v) for ct, v in vals if v is not None]
        if not vals:
            continue
        ys = [v for _, v in vals]
        ax.plot([min(ys), max(ys)], [i, i], color="0.6", lw=2)
        for ct, v in vals:
            ax.plot(v, i, "o", ms=5, color=f"C{cities.index(ct) % 10}")
    ax.set_yticks(range(len(rows_keys)), [" · ".join(k) for k in rows_keys], fontsize=7)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("accuracy")
    from matplotlib.lines import Line2D

    ax.legend(
        [Line2D([], [], marker="o", ls="", color=f"C{i % 10}") for i in range(len(cities))],
        cities,
        fontsize=7,
        loc="lower right",
    )
    ax.set_title("Range of accuracy across cities", fontsize=10)
    return _figure_uri(fig)


def build_context(results_dirs: list) -> dict:
    from scoring.relations import CATALOGUE

    summaries, rows = [], []
    seen = {}
    for d in results_dirs:
        summary, rs = load_results(d)
        summaries.append(
            {
                "path": str(d),
                **{
                    k: summary.get(k)
                    for k in ("benchmark", "runs", "versions", "selfcheck", "created_at", "gate", "scope")
                },
            }
        )
        for r in rs:
            key = (r.get("model"), r.get("modality"), r.get("form"), r.get("id"))
            if key in seen:
                raise InputError(
                    f"{d}: sample {r.get('id')} ({r.get('model')}, {r.get('modality')}, "
                    f"{r.get('form')}) is also in {seen[key]}"
                )
            seen[key] = str(d)
            rows.append(r)
    if not rows:
        raise InputError("no verdicts in " + ", ".join(map(str, results_dirs)))
    cells = summary_cells(rows)
    models = _ordered(r["model"] for r in rows)
    families = _ordered((r.get("family") for r in rows), ("topology", "direction", "metric", "ordering"))
    cities = _ordered(r.get("city") for r in rows)
    relations = sorted(set(CATALOGUE) | {r["relation"] for r in rows if r.get("relation")})
    combos = sorted(
        {(r["model"], r["modality"], r["form"]) for r in rows},
        key=lambda k: (
            models.index(k[0]),
            MODALITIES.index(k[1]) if k[1] in MODALITIES else 9,
            FORMS.index(k[2]) if k[2] in FORMS else 9,
        ),
    )
    idx = defaultdict(dict)
    for c in cells:
        idx[c["level"]][
            tuple(c.get(k) for k in ("model", "modality", "form", "city", "family", "relation"))
        ] = c

    def get(level, model, modality, form, city=None, family=None, relation=None):
        return idx[level].get((model, modality, form, city, family, relation))

    overall = []
    for model in models:
        for mod in _ordered((r["modality"] for r in rows if r["model"] == model), MODALITIES):
            overall.append(
                {"model": model, "modality": mod, "cells": [get("overall", model, mod, f) for f in FORMS]}
            )
    city_rows = []
    for key in combos:
        cs = [get("city", *key, city=ct) for ct in cities]
        accs = [c["accuracy"] for c in cs if c and c["accuracy"] is not None]
        city_rows.append(
            {
                "key": key,
                "cells": cs,
                "range": round(100 * (max(accs) - min(accs)), 1) if len(accs) > 1 else None,
            }
        )
    family_rows = [{"key": key, "cells": [get("family", *key, family=f) for f in families]} for key in combos]
    relation_rows = [
        {
            "relation": r,
            "name": CATALOGUE[r].name if r in CATALOGUE else "",
            "family": CATALOGUE[r].family if r in CATALOGUE else "",
            "cells": [get("relation", *key, relation=r) for key in combos],
        }
        for r in relations
    ]
    quality = [c for c in cells if c["level"] in ("family", "city") and c["quality_n"]]
    refusal = [c for c in cells if c["level"] == "overall" and c["n_answerable"] < c["n"]]
    screens = defaultdict(lambda: defaultdict(int))
    for r in rows:
        if r.get("screen"):
            screens[(r["model"], r["modality"])][r["screen"]] += 1
    set_rows = defaultdict(
        lambda: {
            "n": 0,
            "precision": 0.0,
            "recall": 0.0,
            "false": defaultdict(int),
            "missed": defaultdict(int),
        }
    )
    for r in rows:
        sm = r.get("set_match")
        if sm:
            s = set_rows[(r["model"], r["modality"], r.get("answer_type"))]
            s["n"] += 1
            s["precision"] += sm["precision"]
            s["recall"] += sm["recall"]
    return {
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "summaries": summaries,
        "n_samples": len(rows),
        "models": models,
        "families": families,
        "cities": cities,
        "forms": FORMS,
        "form_labels": FORM_LABELS,
        "combos": combos,
        "overall": overall,
        "city_rows": city_rows,
        "family_rows": family_rows,
        "relation_rows": relation_rows,
        "quality": quality,
        "refusal": refusal,
        "screens": {" · ".join(k): dict(v) for k, v in screens.items()},
        "set_rows": [
            {"key": k, "n": v["n"], "precision": v["precision"] / v["n"], "recall": v["recall"] / v["n"]}
            for k, v in sorted(set_rows.items())
        ],
        "mcnemar": mcnemar_pairs(rows),
        "fig_family": _fig_family_bars(cells, models, families),
        "fig_heatmap": _fig_heatmap(cells, relations, combos),
        "fig_cities": _fig_city_ranges(cells, combos, cities),
        "pct": _pct,
    }


def render_html(context: dict) -> str:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(RESOURCES_DIR / "report")),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("report.html.j2").render(**context)


def write_report(results_dirs: list, out_html) -> Path:
    """Write the self-contained HTML report of one or more RESULTS directories."""
    if not results_dirs:
        raise InputError("no results directory given")
    html = render_html(build_context(list(results_dirs)))
    out = Path(out_html)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(html)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, out)
    except OSError as exc:
        raise OutputError(f"{out}: cannot write ({exc.strerror})") from None
    return out
