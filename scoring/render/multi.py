"""The maps of the cross-map modalities, drawn from the existing instances with the one renderer
(`render_map`): no new truth, only the same scene shown differently (layout: scoring.formats.mapsets).

image-multi: the scene is split over two maps at different scales. Map 1 (detail) shows the target
(F0, or the edit's target) alone around its own extent; map 2 (overview) shows every other feature
over a wider area that contains the whole scene, so map 1's area lies inside it. Each map keeps
its own scale bar, north arrow and sidecar: relating F0 to its partners needs locating map 1 on
map 2 by the real streets, buildings and water both draw. A one-feature scene gets the same
feature on an overview at a third of the detail's scale. Pixel edits are expressed on map 1.

image-context: the instance's own map (the image modality's `<id>.png`, unchanged) among up to
three distractor maps of other scenes of the same city and task, in an order seeded by the
benchmark seed and the instance id. A distractor is another instance's map whose feature labels
are renumbered past every label of the benchmark (F0 -> F<offset>), so the labels the question
names appear on exactly one map; each distractor is drawn once and shared by every set using it.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import random
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import shapely
from shapely.geometry import shape

from scoring.errors import InputError
from scoring.execute import Executor, LocalExecutor
from scoring.formats.benchmark import Benchmark
from scoring.formats.maps_index import write_index
from scoring.formats.mapsets import (
    CONTEXT_DISTRACTORS,
    DISTRACTOR_SUFFIX,
    MULTI_SUFFIXES,
    SET_SCHEMA,
    feature_number,
    set_path,
)
from scoring.formats.records import Instance
from scoring.render.batch import MapContext, _context_index
from scoring.render.context import ContextIndex
from scoring.render.renderer import render_map
from scoring.render.sidecar.records import write_map_files
from scoring.render.style import load_style
from scoring.render.version import RENDERER_VERSION
from scoring.render.view import ground_per_3857, to_3857
from scoring.support.files import write_json_atomic
from scoring.vocab import MAP_SET_MODALITIES, Modality, Task

log = logging.getLogger(__name__)

DISTRACTORS = CONTEXT_DISTRACTORS
OVERVIEW_MIN_RATIO = 1.5  # the overview spans at least this many times the detail's side
ONE_FEATURE_RATIO = 3.0  # a one-feature scene: overview at a third of the detail's scale

# A unit of drawing: (key, "map" or "multi", the instance as drawn, the style). A "multi" unit draws
# an instance's two image-multi maps, one after the other (the overview's view needs the detail's).
Unit = tuple[str, str, Instance, dict[str, Any]]


def target_of(instance: Instance) -> str:
    """The feature a map set centres on: the edit's target, or F0 (every question's subject)."""
    return str(instance.get("target") or "F0") if instance.get("task") == Task.EDIT else "F0"


def _shown(instance: Instance, map_id: str, fids: Iterable[str]) -> Instance:
    """The instance as one map of a set shows it: only the features ``fids``, under ``map_id``."""
    keep = set(fids)
    scene = instance["scene"]
    features = [f for f in scene.get("features", []) if _fid(f) in keep]
    return {**instance, "id": map_id, "scene": {**scene, "features": features}}


def _fid(feature: dict[str, Any]) -> str:
    return str((feature.get("properties") or {}).get("id", feature.get("id")))


def _bounds_3857(instance: Instance, fids: Iterable[str], epsg: int) -> tuple[float, ...]:
    keep = set(fids)
    geoms = [to_3857(shape(f["geometry"]), epsg) for f in instance["scene"]["features"] if _fid(f) in keep]
    return tuple(float(v) for v in shapely.total_bounds(geoms))


def _with_min_side(style: dict[str, Any], side_3857: float, cx: float, cy: float) -> dict[str, Any]:
    """A style whose square view (centred at cx, cy) is at least ``side_3857`` wide."""
    out = copy.deepcopy(style)
    ground = side_3857 * ground_per_3857(cx, cy)
    out["view"]["min_side_m"] = max(float(out["view"]["min_side_m"]), ground)
    return out


def multi_record(instance: Instance) -> dict[str, Any]:
    """The image-multi set of an instance: map 1 the target alone, map 2 the other features."""
    iid = str(instance["id"])
    fids = [_fid(f) for f in instance["scene"].get("features", [])]
    target = target_of(instance)
    if target not in fids:
        raise InputError(f"instance {iid}: target {target} is not in its scene")
    others = [f for f in fids if f != target]
    detail_id, overview_id = (iid + s for s in MULTI_SUFFIXES)
    return {
        "schema": SET_SCHEMA,
        "modality": str(Modality.IMAGE_MULTI),
        "instance": iid,
        "renderer": RENDERER_VERSION,
        "maps": [
            {"id": detail_id, "role": "detail", "features": [target]},
            {"id": overview_id, "role": "overview", "features": others or [target]},
        ],
        "edit_map": 0,  # the detail map shows the target: pixel edits are expressed there
    }


def draw_multi(
    instance: Instance, context: ContextIndex | None, style: dict[str, Any]
) -> list[tuple[bytes, dict[str, Any]]]:
    """(PNG, sidecar) of both maps of the instance's image-multi set. The detail is drawn first:
    the overview's view is then made wide enough for the whole scene AND the detail's actual view,
    whatever the renderer's framing rule, so map 1's area always lies inside map 2."""
    record = multi_record(instance)
    detail, overview = record["maps"]
    png1, side1 = render_map(_shown(instance, detail["id"], detail["features"]), context, style)
    x0, y0, x1, y1 = (float(v) for v in side1["view"]["bounds_3857"])
    epsg = int(side1["crs"]["task_epsg"])
    if overview["features"] != detail["features"]:
        # the renderer centres a view on its features' bounds: the other features' here
        ox0, oy0, ox1, oy1 = _bounds_3857(instance, overview["features"], epsg)
        cx, cy = (ox0 + ox1) / 2, (oy0 + oy1) / 2
        ax0, ay0, ax1, ay1 = _bounds_3857(instance, [_fid(f) for f in instance["scene"]["features"]], epsg)
        half = max(cx - min(ax0, x0), max(ax1, x1) - cx, cy - min(ay0, y0), max(ay1, y1) - cy)
        side = max(2 * half * (1 + 2 * float(style["view"]["padding"])), OVERVIEW_MIN_RATIO * (x1 - x0))
    else:  # one feature: the same view centre, a third of the scale
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        side = ONE_FEATURE_RATIO * (x1 - x0)
    shown = _shown(instance, overview["id"], overview["features"])
    png2, side2 = render_map(shown, context, _with_min_side(style, side, cx, cy))
    return [(png1, side1), (png2, side2)]


# ---- image-context ---------------------------------------------------------------------------
def label_offset(instances: Iterable[Instance]) -> int:
    """The first label number past every label of the benchmark: a distractor's F<k> is drawn as
    F<k + offset>, so it can never be read as one of the instance's own features."""
    top = -1
    for inst in instances:
        for f in inst["scene"].get("features", []):
            k = feature_number(_fid(f))
            top = max(top, k if k is not None else -1)
    return top + 1


def relabelled(instance: Instance, offset: int) -> Instance:
    """The instance drawn as a distractor: every F<k> renamed F<k + offset>."""

    def rename(fid: str) -> str:
        k = feature_number(fid)
        return f"F{k + offset}" if k is not None else fid

    scene = instance["scene"]
    features = []
    for f in scene.get("features", []):
        props = {**(f.get("properties") or {})}
        if "id" in props:
            props["id"] = rename(str(props["id"]))
        features.append({**f, **({"id": rename(str(f["id"]))} if "id" in f else {}), "properties": props})
    out: Instance = {
        **instance,
        "id": str(instance["id"]) + DISTRACTOR_SUFFIX,
        "scene": {**scene, "features": features},
    }
    if instance.get("task") == Task.EDIT:
        out["target"] = rename(str(instance.get("target") or "F0"))
    if isinstance(instance.get("map_properties"), dict):  # attributes drawn on the map, by label
        out["map_properties"] = {rename(str(k)): v for k, v in instance["map_properties"].items()}
    return out


def _rng(seed: Any, iid: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}|{iid}|{Modality.IMAGE_CONTEXT}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def context_record(
    instance: Instance, pool: list[Instance], seed: Any, offset: int, k: int = DISTRACTORS
) -> dict:
    """The image-context set of an instance: its own map and ``k`` distractors from ``pool`` (other
    instances of the same city and task, labels renumbered by ``offset``), in a seeded order."""
    iid = str(instance["id"])
    candidates = sorted(
        str(i["id"])
        for i in pool
        if i["id"] != iid and i.get("task") == instance.get("task") and i.get("city") == instance.get("city")
    )
    rng = _rng(seed, iid)
    chosen = rng.sample(candidates, min(k, len(candidates)))
    by_id = {str(i["id"]): i for i in pool}
    own = {"id": iid, "role": "relevant", "features": [_fid(f) for f in instance["scene"]["features"]]}
    maps = [own] + [
        {
            "id": c + DISTRACTOR_SUFFIX,
            "role": "distractor",
            "features": [_fid(f) for f in relabelled(by_id[c], offset)["scene"]["features"]],
        }
        for c in chosen
    ]
    rng.shuffle(maps)
    return {
        "schema": SET_SCHEMA,
        "modality": str(Modality.IMAGE_CONTEXT),
        "instance": iid,
        "renderer": RENDERER_VERSION,
        "seed": seed,
        "maps": maps,
        "edit_map": next(i for i, m in enumerate(maps) if m["role"] == "relevant"),
    }


# ---- drawing ---------------------------------------------------------------------------------
@dataclass
class SetSummary:
    out_dir: Path
    sets: dict[str, int] = field(default_factory=dict)  # modality -> sets written
    maps: int = 0  # maps drawn for them
    seconds: float = 0.0


def plan_sets(
    bench: Benchmark, modalities: Iterable[str], ids: Iterable[str] | None = None, style: dict | None = None
) -> tuple[list[Unit], dict[str, list[dict]]]:
    """Every map to draw and every set record to write for ``modalities`` (all instances, or
    ``ids``). Labels are renumbered past the whole benchmark's, whichever instances are drawn."""
    style = style or load_style()
    wanted = [Modality(m) for m in modalities]
    bad = [m for m in wanted if not m.map_set]
    if bad:
        raise InputError(
            f"--modalities: {bad[0]} is not a map-set modality ({', '.join(MAP_SET_MODALITIES)})"
        )
    every = bench.all_instances()
    chosen = bench.select(ids) if ids else every
    units: dict[str, Unit] = {}
    records: dict[str, list[dict]] = {str(m): [] for m in wanted}
    seed = bench.manifest.get("seed", 0)
    offset = label_offset(every)
    for inst in chosen:
        if Modality.IMAGE_MULTI in wanted:
            rec = multi_record(inst)
            units[rec["maps"][0]["id"]] = (rec["maps"][0]["id"], "multi", inst, style)
            records[Modality.IMAGE_MULTI].append(rec)
        if Modality.IMAGE_CONTEXT in wanted:
            rec = context_record(inst, every, seed, offset)
            for m in rec["maps"]:
                if m["role"] == "relevant" and not (bench.maps_dir / f"{m['id']}.png").is_file():
                    units[m["id"]] = (
                        m["id"],
                        "map",
                        inst,
                        style,
                    )  # the image modality's map, if not yet drawn
                elif m["role"] == "distractor":
                    source = bench.get(m["id"].removesuffix(DISTRACTOR_SUFFIX))
                    if source is not None:
                        units.setdefault(m["id"], (m["id"], "map", relabelled(source, offset), style))
            records[Modality.IMAGE_CONTEXT].append(rec)
    return sorted(units.values(), key=lambda u: u[0]), records


def _draw(units: list[Unit], ctx: MapContext) -> list[tuple[bytes, dict[str, Any]]] | int:
    """Draw a batch of units. With ctx.out_dir (a worker on this machine) it writes their maps
    and returns how many; else (a Dask worker, maybe elsewhere) it hands the maps back."""
    context = _context_index(ctx)
    drawn: list[tuple[bytes, dict[str, Any]]] = []
    for _, kind, instance, style in units:
        if kind == "multi":
            drawn.extend(draw_multi(instance, context, style))
        else:
            drawn.append(render_map(instance, context, style))
    if ctx.out_dir is None:
        return drawn
    for png, record in drawn:
        write_map_files(Path(ctx.out_dir), png, record)
    return len(drawn)


def render_map_sets(
    bench_dir: Benchmark | str | Path,
    modalities: Iterable[str] = MAP_SET_MODALITIES,
    *,
    ids: Iterable[str] | None = None,
    jobs: int | None = None,
    out_dir: str | Path | None = None,
    executor: Executor | None = None,
) -> SetSummary:
    """Draw the maps of the map-set modalities into <bench>/maps/ (or out_dir), then write each
    set file (after its maps, so an existing set file implies complete maps). The units run in
    batches on ``executor`` (default: ``jobs`` local processes), the stage's executor as for
    the single maps (scoring.render.batch), a Dask cluster included."""
    bench = bench_dir if isinstance(bench_dir, Benchmark) else Benchmark.open(bench_dir)
    out = Path(out_dir) if out_dir else bench.maps_dir
    out.mkdir(parents=True, exist_ok=True)
    units, records = plan_sets(bench, modalities, ids)
    summary = SetSummary(out)
    t0 = time.perf_counter()
    if executor is None:
        executor = LocalExecutor(max(1, min(int(jobs or os.cpu_count() or 1), len(units) or 1)))
    size = max(1, min(8, len(units) // (executor.workers * 4)))
    batches = [units[i : i + size] for i in range(0, len(units), size)]
    ctx = MapContext.of(bench, None if executor.distributed else str(out.resolve()))
    # spawn: safe when the parent holds a Qt/QGIS application (the plugin)
    for done in executor.map(_draw, batches, shared=ctx, desc="map sets", unit="batch", start_method="spawn"):
        if isinstance(done, int):
            summary.maps += done
            continue
        for png, record in done:
            write_map_files(out, png, record)
        summary.maps += len(done)
    for modality, recs in records.items():
        for rec in recs:
            write_json_atomic(set_path(out, rec["instance"], modality), rec, indent=1)
        summary.sets[modality] = len(recs)
    write_index(out)  # the sets' maps join the maps' identity (scoring.formats.maps_index)
    summary.seconds = time.perf_counter() - t0
    log.info("drew %d maps for %s into %s in %.1f s", summary.maps, summary.sets, out, summary.seconds)
    return summary
