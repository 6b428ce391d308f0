"""The report's figures, drawn with matplotlib's Agg renderer without pyplot (no global backend
state: safe inside QGIS): embedded in the report as PNG data URIs and written beside it as PNG
(300 dpi), SVG and PDF for a paper. Legends list only what ran."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import matplotlib
import matplotlib.patches
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from scoring.vocab import BASE_MODALITIES, MODALITIES

MODALITY_COLOURS = {
    "geojson": "#1f77b4",
    "image": "#d62728",
    "together": "#2ca02c",
    "image-multi": "#9467bd",
    "image-context": "#ff7f0e",
}


FIGURE_FORMATS = ("png", "svg", "pdf")
# no creation date or software in the files: the same verdicts give the same bytes
_METADATA = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
}


def figure_uri(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=150, bbox_inches="tight", metadata=_METADATA["png"])
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def write_figure(fig: Figure, stem: Path) -> list[Path]:
    """stem.png (300 dpi), stem.svg and stem.pdf; returns the paths."""
    paths = []
    # a fixed salt: the SVG's clip-path ids are otherwise random (uuid4) in every file
    with matplotlib.rc_context({"svg.hashsalt": "spatialgap"}):
        for fmt in FIGURE_FORMATS:
            path = stem.with_suffix("." + fmt)
            fig.savefig(path, format=fmt, dpi=300, bbox_inches="tight", metadata=_METADATA[fmt])
            paths.append(path)
    return paths


def draw_all(*, fig2: list[dict], fig2b: list[dict], fig3b: list[dict], table4: dict, table2: dict) -> dict:
    """name -> Figure (or None when there is nothing to draw), in the report's order."""
    return {
        "figure2": fig_qa_accuracy(fig2),
        "figure2b": fig_edit_success(fig2b),
        "figure3b": fig_relation_mcq(fig3b),
        "heatmap": fig_heatmap(table4),
        "cities": fig_city_ranges(table2),
    }


def fig_qa_accuracy(records: list[dict]) -> Figure | None:
    """Figure 2: QA accuracy (mean of open and MCQ) per model x input type, with intervals;
    an input type a model did not run is marked "not run" on the axis, never drawn as 0."""
    models = list(dict.fromkeys(r["model"] for r in records))
    if not models or all(r["rate"] is None for r in records):
        return None
    # the paper's three input types always (an absent one says "not run"), cross-map ones when run
    present = {r["modality"] for r in records if r["rate"] is not None}
    shown = [m for m in MODALITIES if m in BASE_MODALITIES or m in present]
    ran = [m for m in shown if any(r["modality"] == m and r["rate"] is not None for r in records)]
    fig = Figure(figsize=(max(5.0, 1.6 * len(models) + 2), 3.4))
    ax = fig.subplots()
    width = 0.8 / len(shown)
    for k, modality in enumerate(shown):
        for i, model in enumerate(models):
            r = next((r for r in records if r["model"] == model and r["modality"] == modality), None)
            x = i + (k - (len(shown) - 1) / 2) * width
            if r is None or r["rate"] is None:
                ax.text(x, 0.02, "not run", rotation=90, ha="center", va="bottom", fontsize=7, color="0.45")
                continue
            err = [[r["rate"] - (r["ci_low"] or r["rate"])], [(r["ci_high"] or r["rate"]) - r["rate"]]]
            ax.bar(x, r["rate"], width=width, yerr=err, capsize=2, color=MODALITY_COLOURS[modality])
    ax.set_xticks(range(len(models)), models, fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("QA accuracy (mean of open, MCQ)")
    ax.legend(
        [Line2D([], [], marker="s", ls="", color=MODALITY_COLOURS[m]) for m in ran],
        list(ran),
        fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),  # outside the axes: never over a bar
    )
    ax.set_title("Figure 2. QA accuracy by model and input type (95 % intervals)", fontsize=10)
    fig.tight_layout()
    return fig


def fig_heatmap(table4: dict) -> Figure | None:
    """Error rate per relation x (input type, form), pooled over models (grey: no data)."""
    rows, columns = table4["rows"], table4["columns"]
    if not rows:
        return None
    data = np.full((len(rows), len(columns)), np.nan)
    for i, r in enumerate(rows):
        for j, c in enumerate(r["cells"]):
            if c["rate"] is not None:
                data[i, j] = c["rate"]
    if np.isnan(data).all():
        return None
    fig = Figure(figsize=(1.5 + 0.7 * len(columns), 0.26 * len(rows) + 1.6))
    ax = fig.subplots()
    # grey, not white, where a cell has no data: white would read as "no errors"
    cmap = matplotlib.colormaps["Reds"].copy()
    cmap.set_bad("#c8c8c8")
    im = ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    ax.set_yticks(range(len(rows)), [f"{r['relation']} {r['name']}"[:40] for r in rows], fontsize=7)
    ax.set_xticks(range(len(columns)), [" · ".join(c) for c in columns], rotation=45, ha="right", fontsize=7)
    fig.colorbar(im, ax=ax, label="error rate", shrink=0.6)
    pooled = " + ".join(table4.get("pool", {}).get("models", [])) or "models"
    ax.set_title(f"Error rate per relation, pooled over {pooled} (grey: no data)", fontsize=10)
    return fig


def fig_city_ranges(table2: dict) -> Figure | None:
    """Each model x input type x task's accuracy per city on one line (the range in points)."""
    cities, rows = table2["cities"], table2["rows"]
    if len(cities) < 2 or not rows:
        return None
    fig = Figure(figsize=(7, 0.32 * len(rows) + 1.2))
    ax = fig.subplots()
    for i, row in enumerate(rows):
        vals = [(ct, c["rate"]) for ct, c in zip(cities, row["cells"], strict=True) if c["rate"] is not None]
        if not vals:
            continue
        ys = [v for _, v in vals]
        ax.plot([min(ys), max(ys)], [i, i], color="0.6", lw=2)
        for ct, v in vals:
            ax.plot(v, i, "o", ms=5, color=f"C{cities.index(ct) % 10}")
    labels = [f"{r['model']} · {r['modality']} · {r['task']}" for r in rows]
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.set_xlim(-0.02, 1.02)
    ax.invert_yaxis()
    ax.set_xlabel("accuracy")
    ax.legend(
        [Line2D([], [], marker="o", ls="", color=f"C{i % 10}") for i in range(len(cities))],
        cities,
        fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),  # outside the axes: never over a point
    )
    ax.set_title("Range of accuracy across cities (Table 2, ours: every input type and task)", fontsize=10)
    return fig


def fig_edit_success(records: list[dict]) -> Figure | None:
    """The paper's Fig. 2b: strict CSR per model x input type that ran edits (on a map image
    the raster-tolerant rate beside it, hatched: another name, another number)."""
    if not records:
        return None
    models = list(dict.fromkeys(r["model"] for r in records))
    ran = [m for m in MODALITIES if any(r["modality"] == m for r in records)]
    bars = [(m, "strict_csr") for m in ran] + [
        (m, "raster_tolerant_rate")
        for m in ran
        if any(r["modality"] == m and r["raster_tolerant_rate"] is not None for r in records)
    ]
    fig = Figure(figsize=(max(5.0, 1.6 * len(models) + 2), 3.4))
    ax = fig.subplots()
    width = 0.8 / len(bars)
    for k, (modality, measure) in enumerate(bars):
        lo_key = "strict_csr_ci_low" if measure == "strict_csr" else "raster_ci_low"
        hi_key = "strict_csr_ci_high" if measure == "strict_csr" else "raster_ci_high"
        for i, model in enumerate(models):
            r = next((r for r in records if r["model"] == model and r["modality"] == modality), None)
            x = i + (k - (len(bars) - 1) / 2) * width
            if r is None or r[measure] is None:
                ax.text(x, 0.02, "not run", rotation=90, ha="center", va="bottom", fontsize=7, color="0.45")
                continue
            err = [[r[measure] - r[lo_key]], [r[hi_key] - r[measure]]]
            hatch = "//" if measure != "strict_csr" else None
            ax.bar(
                x,
                r[measure],
                width=width,
                yerr=err,
                capsize=2,
                color=MODALITY_COLOURS[modality],
                hatch=hatch,
                edgecolor="white",
            )
    ax.set_xticks(range(len(models)), models, fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("editing success")
    labels = [f"{m} strict CSR" if meas == "strict_csr" else f"{m} raster-tolerant" for m, meas in bars]
    handles = [
        matplotlib.patches.Patch(
            facecolor=MODALITY_COLOURS[m], hatch="//" if meas != "strict_csr" else None, edgecolor="white"
        )
        for m, meas in bars
    ]
    ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("Figure 2b. Editing success by model and input type (95 % intervals)", fontsize=10)
    fig.tight_layout()
    return fig


def fig_relation_mcq(records: list[dict]) -> Figure | None:
    """The paper's Fig. 3b: MCQ accuracy per relation (rows) x model and input type (columns)."""
    if not records:
        return None
    relations = sorted({r["relation"] for r in records if r["relation"]})
    columns = sorted(
        {(r["model"], r["modality"]) for r in records}, key=lambda c: (c[0], MODALITIES.index(c[1]))
    )
    data = np.full((len(relations), len(columns)), np.nan)
    for r in records:
        if r["relation"] and r["rate"] is not None:
            data[relations.index(r["relation"]), columns.index((r["model"], r["modality"]))] = r["rate"]
    fig = Figure(figsize=(1.8 + 0.55 * len(columns), 0.26 * len(relations) + 1.8))
    ax = fig.subplots()
    cmap = matplotlib.colormaps["Blues"].copy()
    cmap.set_bad("#c8c8c8")
    im = ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    ax.set_yticks(range(len(relations)), relations, fontsize=7)
    ax.set_xticks(
        range(len(columns)), [f"{m} · {mod}" for m, mod in columns], rotation=45, ha="right", fontsize=7
    )
    fig.colorbar(im, ax=ax, label="MCQ accuracy", shrink=0.6)
    ax.set_title("Figure 3b. MCQ accuracy per relation, model and input type", fontsize=10)
    return fig
