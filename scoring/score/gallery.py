"""A case gallery like the paper's Figs. 4/5: for a few instances per family (one QA item and one
edit), the same item under each input type that ran it, each model's reply and verdict, and for
edits a drawing of the scene with the target before, the reference edit and every model's edit
(GeoJSON and Together replies, in the task CRS). Replies are read from the runs' journals; a run
directory that is gone leaves its replies out ("reply not available"), never the verdict."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from shapely.geometry import shape
from shapely.geometry.base import BaseGeometry

from scoring.constraints.edits import EditError, apply_geometry_ops
from scoring.formats.rundir import PREDICTIONS
from scoring.support.files import read_jsonl
from scoring.vocab import FAMILIES, MODALITIES, Form, Modality, Task

PER_FAMILY = 1  # instances per family and task
REPLY_CHARS = 360
NO_REPLY = "reply not available"
_PIXEL = {str(m) for m in Modality if m.pixel_edits}


def _instances(bench_dirs: list[str], ids: set[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for d in bench_dirs:
        for name in ("qa.jsonl", "edit.jsonl"):
            p = Path(d) / name
            if p.is_file():
                for _, inst in read_jsonl(p):
                    if isinstance(inst, dict) and inst.get("id") in ids:
                        out[inst["id"]] = inst
    return out


def _replies(run_dirs: set[str]) -> dict[tuple[str, str], str]:
    """(run dir, sample key) -> the final reply's text, for the runs still on disk."""
    out: dict[tuple[str, str], str] = {}
    for run in run_dirs:
        p = Path(run) / PREDICTIONS
        if not p.is_file():
            continue
        for _, rec in read_jsonl(p):
            if isinstance(rec, dict) and rec.get("final"):
                out[(run, str(rec.get("sample")))] = str(rec.get("text") or rec.get("error") or "")
    return out


def _choose(rows: list[dict], per_family: int) -> list[str]:
    """Per family and task, the instances answered under the most input types (then by id)."""
    seen: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for r in rows:
        seen[(str(r.get("family")), str(r.get("task")))][r["id"]].add(r["modality"])
    chosen = []
    for family in FAMILIES:
        for task in (Task.QA, Task.EDIT):
            cands = seen.get((str(family), str(task)), {})
            chosen += sorted(cands, key=lambda i: (-len(cands[i]), i))[:per_family]
    return chosen


def gallery(rows: list[dict], bench_dirs: list[str], *, per_family: int = PER_FAMILY) -> list[dict]:
    """The gallery's cases: instance text, reference, every (model, input type, form) reply with
    its verdict and reason, and for edits a Figure (or None)."""
    ids = _choose(rows, per_family)
    mine = [r for r in rows if r["id"] in set(ids)]
    insts = _instances(bench_dirs, set(ids))
    replies = _replies({str(r.get("run")) for r in mine if r.get("run")})
    cases = []
    for iid in ids:
        inst: Mapping[str, Any] = insts.get(iid, {})  # {}: not in the benchmark, shown as such
        answers = sorted(
            (r for r in mine if r["id"] == iid),
            key=lambda r: (MODALITIES.index(r["modality"]), r["model"], str(r["form"])),
        )
        entries = []
        for r in answers:
            text = replies.get((str(r.get("run")), f"{iid}|{r['form']}"), NO_REPLY)
            entries.append(
                {
                    "model": r["model"],
                    "modality": r["modality"],
                    "form": r["form"],
                    "verdict": r["verdict"],
                    "reason": r.get("reason") or "",
                    "reply": text if len(text) <= REPLY_CHARS else text[:REPLY_CHARS] + " …",
                }
            )
        cases.append(
            {
                "id": iid,
                "family": answers[0].get("family") if answers else "",
                "relation": answers[0].get("relation") if answers else "",
                "task": answers[0].get("task") if answers else "",
                "text": inst.get("question")
                or inst.get("instruction")
                or "(instance not found in the benchmark)",
                "reference": _reference(inst),
                "answers": entries,
                "figure": _edit_figure(inst, answers) if inst.get("task") == Task.EDIT else None,
            }
        )
    return cases


def _reference(inst: Mapping[str, Any]) -> str:
    if inst.get("task") == Task.EDIT:
        return json.dumps(inst.get("reference_edit"), ensure_ascii=False)
    ans = inst.get("answer")
    unit = inst.get("unit") or ""
    choice = inst.get("correct_choice")
    return f"{json.dumps(ans, ensure_ascii=False)} {unit}".strip() + (f" (MCQ: {choice})" if choice else "")


def _edit_figure(inst: Mapping[str, Any], answers: list[dict]) -> Figure | None:
    """The scene (grey), the target before (blue), the reference edit (green, dashed) and each
    model's edit from a GeoJSON or Together reply (red shades), in the task CRS."""
    feats = {
        f["id"]: shape(f["geometry"])
        for f in (inst.get("scene") or {}).get("features", [])
        if f.get("geometry")
    }
    target = inst.get("target") or "F0"
    if target not in feats:
        return None
    fig = Figure(figsize=(4.2, 4.6))
    ax = fig.subplots()
    for fid, g in feats.items():
        _draw(ax, g, color="#1f77b4" if fid == target else "0.6", lw=1.6 if fid == target else 0.8)
    drawn = [("before", "#1f77b4", "-")]
    ref = _applied(feats[target], inst.get("reference_edit"))
    if ref is not None:
        _draw(ax, ref, color="#2ca02c", lw=1.4, ls="--")
        drawn.append(("reference", "#2ca02c", "--"))
    for k, r in enumerate(a for a in answers if a["form"] == Form.EDIT and a["modality"] not in _PIXEL):
        edited = _applied(feats[target], r.get("value"))
        if edited is not None:
            colour = f"C{(3 + k) % 10}"
            _draw(ax, edited, color=colour, lw=1.2)
            drawn.append((f"{r['model']} · {r['modality']} ({r['verdict']})", colour, "-"))
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_axis_off()  # coordinates of the task CRS say nothing at this size
    ax.legend(
        [Line2D([], [], color=c, ls=ls) for _, c, ls in drawn],
        [n for n, _, _ in drawn],
        fontsize=6,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.02),  # below the drawing: never over a feature
        ncol=2,
        frameon=False,
    )
    ax.set_title(f"{inst.get('id')}", fontsize=8)
    return fig


def _applied(geom: BaseGeometry, edit: object) -> BaseGeometry | None:
    if not isinstance(edit, dict) or not isinstance(edit.get("operations"), list):
        return None
    try:
        return apply_geometry_ops(geom, edit["operations"])
    except (EditError, TypeError, ValueError):
        return None


def _draw(ax: Any, geom: BaseGeometry, **style: Any) -> None:
    color, lw, ls = style.get("color"), style.get("lw", 1.0), style.get("ls", "-")
    if geom.geom_type.startswith("Multi") or geom.geom_type == "GeometryCollection":
        for part in getattr(geom, "geoms", []):
            _draw(ax, part, **style)
    elif geom.geom_type == "Polygon":
        x, y = geom.exterior.xy
        ax.plot(x, y, color=color, lw=lw, ls=ls)
    elif geom.geom_type == "LineString":
        x, y = geom.xy
        ax.plot(x, y, color=color, lw=lw, ls=ls)
    elif geom.geom_type == "Point":
        ax.plot([geom.x], [geom.y], marker="o", ms=4, color=color, ls="none")
