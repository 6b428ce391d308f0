"""The samples the browser shows: each verdict row (results/verdicts.jsonl) joined with its
prediction record (the run's journal), its instance (the benchmark) and its map, and for an edit
the reply's and the reference's edited target drawn in the map's pixels."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shapely.geometry import shape
from shapely.geometry.base import BaseGeometry

from scoring.constraints.edits import apply_edit
from scoring.errors import InputError, SpatialGapError
from scoring.formats.benchmark import Benchmark
from scoring.formats.records import Instance
from scoring.formats.rundir import final_predictions
from scoring.geometry.georef import PixelTransform
from scoring.geometry.scene import Scene
from scoring.score.results import check_set
from scoring.score.verdicts import score_prediction
from scoring.support.files import read_json, read_jsonl
from scoring.vocab import Task

REPLY_CHARS = 4000  # a reply longer than this is cut in the page (the journal keeps it whole)


def _svg_path(geom: BaseGeometry | None, pt: PixelTransform) -> str | None:
    """An SVG path (map pixels, y down) of a task-CRS geometry; None for none."""
    if geom is None or geom.is_empty:
        return None
    px = pt.geometry_task_to_pixel(geom)
    parts: list[str] = []

    def ring(coords: Any, close: bool) -> None:
        pts = [f"{x:.1f} {y:.1f}" for x, y, *_ in coords]
        if pts:
            parts.append("M" + " L".join(pts) + (" Z" if close else ""))

    for g in getattr(px, "geoms", [px]):
        if g.geom_type == "Polygon":
            ring(g.exterior.coords, True)
            for hole in g.interiors:
                ring(hole.coords, True)
        elif g.geom_type == "LineString":
            ring(g.coords, False)
        elif g.geom_type == "Point":  # a small square: one path type for every geometry
            x, y = g.x, g.y
            parts.append(f"M{x - 9:.1f} {y - 9:.1f} h18 v18 h-18 Z")
    return " ".join(parts) or None


def _target_geom(scene_json: dict | None, target: str) -> BaseGeometry | None:
    for f in (scene_json or {}).get("features", []):
        if f.get("id") == target or (f.get("properties") or {}).get("id") == target:
            return shape(f["geometry"]) if f.get("geometry") else None
    return None


class _BenchView:
    """One benchmark's instances, maps and pixel transforms, read once."""

    def __init__(self, path: Path, out_dir: Path):
        self.bench = Benchmark.open(path)
        self.out_dir = out_dir
        self._pt: dict[str, PixelTransform | None] = {}
        self._reference: dict[str, str | None] = {}

    def map_url(self, instance_id: str) -> str | None:
        p = self.bench.maps_dir / f"{instance_id}.png"
        return Path(os.path.relpath(p, self.out_dir)).as_posix() if p.is_file() else None

    def transform(self, instance_id: str) -> PixelTransform | None:
        if instance_id not in self._pt:
            sidecar = self.bench.maps_dir / f"{instance_id}.json"
            try:
                self._pt[instance_id] = PixelTransform.from_sidecar(read_json(sidecar))
            except (SpatialGapError, KeyError, TypeError, ValueError):
                self._pt[instance_id] = None
        return self._pt[instance_id]

    def reference_path(self, inst: Instance) -> str | None:
        """The target after the reference edit, in map pixels."""
        iid = inst["id"]
        if iid not in self._reference:
            pt = self.transform(iid)
            geom = None
            if pt is not None and inst.get("reference_edit"):
                edited = apply_edit(Scene.from_geojson(inst["scene"]), inst["target"], inst["reference_edit"])
                geom = edited.scene.geom(inst["target"])
            self._reference[iid] = _svg_path(geom, pt) if pt is not None else None
        return self._reference[iid]


def _question(inst: Instance) -> dict[str, Any]:
    made = inst.get("unanswerable")
    # a variant built unanswerable: why (scoring.relations.unanswerable), shown with the oracle answer
    why = {"kind": made.get("kind"), "reason": made.get("reason")} if isinstance(made, dict) else None
    if inst.get("task") == Task.QA:
        return {
            "unanswerable": why,
            "text": inst.get("question"),
            "choices": inst.get("choices") or [],
            "answer": inst.get("answer"),
            "unit": inst.get("unit"),
            "correct_choice": inst.get("correct_choice"),
        }
    return {"text": inst.get("instruction"), "target": inst.get("target"), "unanswerable": why}


def _reply_path(view: _BenchView, inst: Instance, record: dict) -> str | None:
    """The reply's edited target in map pixels (re-scored: the verdict rows keep no geometry)."""
    pt = view.transform(inst["id"])
    if pt is None or record.get("status") != "ok":
        return None
    v = score_prediction(inst, record, view.bench.path)
    return _svg_path(_target_geom(v.edited_scene, inst["target"]), pt)


def collect_samples(results_dirs: Sequence[str | Path], out_dir: Path) -> list[dict[str, Any]]:
    """Every scored sample of the results directories, with what the page shows of it."""
    samples: list[dict[str, Any]] = []
    for results in map(Path, results_dirs):
        summary_path = results / "summary.json"
        summary = read_json(summary_path)
        check_set(results, summary)
        try:
            bench_path = Path(summary["benchmark"]["path"])
        except (KeyError, TypeError):
            raise InputError(f"{summary_path}: no benchmark.path (not a results summary)") from None
        view = _BenchView(bench_path, out_dir)
        journals: dict[str, dict[str, dict]] = {}
        for n, row in read_jsonl(results / "verdicts.jsonl"):
            if not isinstance(row, dict) or "id" not in row or "run" not in row:
                raise InputError(f"{results / 'verdicts.jsonl'}:{n}: not a verdict row")
            run = str(row["run"])
            if run not in journals:
                path = Path(run) / "predictions.jsonl"
                journals[run] = final_predictions(path) if path.is_file() else {}
            inst = view.bench.get(row["id"])
            sample_key = f"{row['id']}|{row['form']}"
            samples.append(_sample(row, journals[run].get(sample_key) or {}, inst, view))
    return samples


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return value if ok else None


def _sample(row: dict, record: dict, inst: Instance | None, view: _BenchView) -> dict[str, Any]:
    text = record.get("text")
    # A journal is read as found (hand-edited, another tool's): a field of the wrong type shows
    # as not reported, never as a crash of the whole browser.
    usage = record.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    edit = row.get("task") == Task.EDIT and inst is not None
    return {
        "id": row["id"],
        "model": row.get("model"),
        "task": row.get("task"),
        "modality": row.get("modality"),
        "form": row.get("form"),
        "family": row.get("family"),
        "relation": row.get("relation"),
        "city": row.get("city"),
        "verdict": row.get("verdict"),
        "reason": row.get("reason"),
        "reading": json.dumps(row.get("value"), ensure_ascii=False) if row.get("value") is not None else None,
        "quality": row.get("quality"),
        "constraints": [row.get("constraints_passed"), row.get("constraints_total")] if edit else None,
        "question": _question(inst) if inst else None,
        "reply": text[:REPLY_CHARS] if isinstance(text, str) else None,
        "reply_cut": isinstance(text, str) and len(text) > REPLY_CHARS,
        "status": record.get("status"),
        "error": record.get("error") if isinstance(record.get("error"), str) else None,
        "tokens": [_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))],
        "latency_s": _number(record.get("latency_s")),
        "attempts": _count(record.get("attempt")),
        "map": view.map_url(row["id"]),
        "edit_reference": view.reference_path(inst) if edit and inst else None,
        "edit_reply": _reply_path(view, inst, record) if edit and inst and record else None,
    }
