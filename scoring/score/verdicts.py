"""Deterministic verdicts: one per sample (instance x form x modality), each with a reason.

Verdicts: correct, wrong, unparsed (a response no answer could be read from; counted as wrong),
error (the request itself failed; counted as wrong in the strict score), and on instances that
are unanswerable in the sample's modality correct_refusal / unfounded_answer.

QA: the raw text is parsed by `scoring.answers` (never guessing) and checked by the relation
catalogue's checker with its tolerances. Editing: the parsed edit is applied to the target by the
builder's executor (`scoring.constraints.edits`), the result is screened (empty, outside the coordinate
domain, null island, far outside the scene, invalid) and every constraint is checked:
CSR = valid non-empty prediction x target actually changed (or an attribute edit) x all hold.
Image edits are in pixels: they are applied to the target drawn in pixel space and mapped back
through the map's recorded transform; besides the strict verdict they get `raster_tolerant`
(constraints hold OR Hausdorff <= 4 px to the reference edit, with required attributes).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shapely
from shapely import affinity
from shapely.geometry import shape
from shapely.geometry.base import BaseGeometry

from scoring import answers, oracle
from scoring.answers.context import reading_context
from scoring.constraints.edits import OPS, EditError, apply_edit, apply_geometry_ops, snap_edited
from scoring.constraints.facts import FactError, check_constraint, describe_constraint
from scoring.errors import SpatialGapError
from scoring.formats.mapsets import edit_map_id
from scoring.formats.records import Instance
from scoring.geometry.georef import PixelTransform
from scoring.relations.base import REFUSAL, check_answer
from scoring.score.screening import screen_geometry, vertex_budget
from scoring.support.memo import IdentityMemo
from scoring.vocab import MODALITIES, Modality, Verdict

if TYPE_CHECKING:
    from scoring.geometry.scene import Scene

RASTER_TOLERANCE_PX = 4.0
NUMERIC_TYPES = ("distance", "perimeter", "area", "density", "count")
INTERNAL_ERROR = "internal error"  # reason prefix of a sample whose scoring raised


@dataclass
class Scored:
    """One scored sample: its verdict (the `Verdict` words) with the reason, the reading and, for
    edits, the constraints checked and the edited scene. `as_dict` is its verdict row's scoring part."""

    verdict: Verdict
    reason: str
    value: Any = None  # the parsed answer (or parsed edit)
    quality: float | None = None  # continuous error where meaningful
    constraints: list[dict] | None = None  # edit: {"index","text","measure","passed","measured"}
    edited_scene: dict | None = None  # edit: the edited scene GeoJSON (task CRS)
    screen: str | None = None  # geometry screening failure name, if any
    raster_tolerant: bool | None = None  # image edits: success under the 4-px Hausdorff rule

    def as_dict(self) -> dict:
        return asdict(self)


# --------------------------------------------------------------------------------- helpers


def _pixel_edits(modality: Modality) -> bool:
    """Edits of this modality are in a map's pixels (image, and the cross-map ones)."""
    return modality in MODALITIES and Modality(modality).pixel_edits


def answerable_in(instance: Instance, modality: Modality) -> bool:
    """Whether the instance can be answered in ``modality`` (as the build recorded it)."""
    return _answerable(instance, modality)


def _answerable(instance: Instance, modality: Modality) -> bool:
    a = instance.get("answerable")
    if isinstance(a, dict):
        if modality not in a and modality in MODALITIES and Modality(modality).map_set:
            return bool(a.get(Modality.IMAGE, True))  # built before the cross-map modalities: as the map
        return bool(a.get(modality, True))
    return True if a is None else bool(a)


def _json_safe(v: Any) -> Any:
    """Parsed values as plain JSON (NaN/inf -> None), so verdicts always serialise."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {str(k): _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return v


def _failed(status: str, error: Any) -> Scored | None:
    if status == "ok":
        return None
    if isinstance(error, dict):
        detail = error.get("kind") or error.get("message") or "request failed"
    else:
        detail = str(error) if error else "request failed"
    return Scored(Verdict.ERROR, f"request failed: {detail}"[:300])


def _never_raises(score: Callable[..., Scored]) -> Callable[..., Scored]:
    """Any failure inside one sample's scoring becomes that sample's verdict, so a sweep goes on.
    A missing input of the benchmark itself (a map sidecar) still stops it, with its message."""

    @functools.wraps(score)
    def guarded(*args: Any, **kwargs: Any) -> Scored:
        try:
            return score(*args, **kwargs)
        except SpatialGapError:
            raise
        except Exception as exc:  # noqa: BLE001 -- the verdict names the exception type
            return Scored(Verdict.ERROR, f"{INTERNAL_ERROR}: {type(exc).__name__}")

    return guarded


# --------------------------------------------------------------------------------- QA


def _quality(answer_type: str, reference: Any, value: Any) -> float | None:
    if isinstance(reference, bool) or isinstance(value, bool):
        return None
    if not isinstance(reference, (int, float)) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(float(value)):
        return None
    if answer_type == "bearing":
        return round(oracle.angle_diff(float(value), float(reference)), 6)
    if answer_type in NUMERIC_TYPES:
        return round(abs(float(value) - float(reference)), 6)
    return None


@_never_raises
def score_qa(
    instance: Instance,
    text: str | None,
    *,
    form: str,
    modality: Modality = Modality.GEOJSON,
    status: str = "ok",
    error: str | None = None,
) -> Scored:
    """The verdict of one QA response (open-ended or multiple-choice)."""
    failed = _failed(status, error)
    if failed:
        return failed
    answerable = _answerable(instance, modality)
    if form == "mcq":
        return _score_choice(instance, text, answerable)
    if form != "open":
        raise ValueError(f"unknown QA form {form!r}")
    return _score_open(instance, text, answerable)


def _score_choice(instance: Instance, text: str | None, answerable: bool) -> Scored:
    """A multiple-choice reply: the letter chosen (the "cannot be determined" option is a refusal)."""
    choices = list(instance.get("choices") or [])
    parsed = answers.parse_choice(text, len(choices) or 4, choices, str(instance.get("question") or ""))
    refusal = parsed.refusal
    value = parsed.value if parsed.ok else None
    if parsed.ok:
        idx = ord(str(value)) - ord("A")
        if 0 <= idx < len(choices) and str(choices[idx]).strip().lower() == REFUSAL:
            refusal = True  # chose the "cannot be determined" option
    if not answerable:
        if refusal:
            return Scored(Verdict.CORRECT_REFUSAL, "refused on an unanswerable instance", value)
        if parsed.ok:
            return Scored(Verdict.UNFOUNDED_ANSWER, f"answered {value} on an unanswerable instance", value)
        return Scored(Verdict.UNPARSED, parsed.reason or "unparsed")
    if refusal:
        return Scored(Verdict.WRONG, "refusal", value)
    if not parsed.ok:
        return Scored(Verdict.UNPARSED, parsed.reason or "unparsed")
    if value == instance.get("correct_choice"):
        return Scored(Verdict.CORRECT, f"chose {value}", value)
    return Scored(Verdict.WRONG, f"chose {value}, expected {instance.get('correct_choice')}", value)


def _score_open(instance: Instance, text: str | None, answerable: bool) -> Scored:
    """An open reply, read by its answer type and checked within the instance's tolerance."""
    answer_type = str(instance.get("answer_type") or "")
    reference = instance.get("answer")
    _, ctx = reading_context(instance, "open")
    parsed = answers.parse_answer(text, answer_type, **ctx)
    value = _json_safe(parsed.value) if parsed.ok else None
    if not answerable:
        if parsed.refusal:
            return Scored(Verdict.CORRECT_REFUSAL, "refused on an unanswerable instance")
        if parsed.ok:
            return Scored(Verdict.UNFOUNDED_ANSWER, "answered an unanswerable instance", value)
        return Scored(Verdict.UNPARSED, parsed.reason or "unparsed")
    if parsed.refusal:
        return Scored(Verdict.WRONG, "refusal")
    if not parsed.ok:
        return Scored(Verdict.UNPARSED, parsed.reason or "unparsed")
    quality = _quality(answer_type, reference, value)
    if check_answer(answer_type, reference, value, instance.get("tolerance")):
        return Scored(
            Verdict.CORRECT, "within tolerance" if quality is not None else "matches", value, quality
        )
    if quality is not None:
        unit = {"bearing": "°"}.get(answer_type, " " + (instance.get("unit") or ""))
        return Scored(Verdict.WRONG, f"off by {quality:g}{unit.rstrip()}", value, quality)
    return Scored(Verdict.WRONG, f"expected {json.dumps(reference, ensure_ascii=False)}"[:200], value)


# --------------------------------------------------------------------------------- editing


def _pixel_ops_to_screen(ops: list[dict]) -> list[dict]:
    """Pixel operations (dx right, dy down, origin [col, row], clockwise as seen on the map)
    expressed in the y-up "screen" frame (col, -row), where the executor's conventions
    (dy up, clockwise = negative mathematical angle) hold unchanged."""
    out = []
    for op in ops:
        op = dict(op)
        if op.get("op") == "translate":
            op["dy"] = -float(op.get("dy", 0))
        elif op.get("op") in ("rotate", "scale") and isinstance(op.get("origin"), (list, tuple)):
            op["origin"] = [op["origin"][0], -float(op["origin"][1])]
        out.append(op)
    return out


def _flip(geom: BaseGeometry) -> BaseGeometry:
    return affinity.scale(geom, 1.0, -1.0, origin=(0, 0))


def _constraint_rows(
    scene: Scene, constraints: Sequence[Mapping[str, Any]], initial: Scene
) -> tuple[list[dict], bool]:
    rows, all_ok = [], True
    for i, c in enumerate(constraints):
        try:
            text = describe_constraint(c)
        except Exception:  # noqa: BLE001 -- a description must never stop scoring
            text = c.get("measure", "?")
        try:
            ok, measured = check_constraint(scene, c, initial)
        except (FactError, KeyError, ValueError, TypeError, shapely.errors.GEOSException) as exc:
            ok, measured = False, f"not measurable: {type(exc).__name__}"
        rows.append(
            {
                "index": i,
                "text": text,
                "measure": c.get("measure"),
                "passed": bool(ok),
                "measured": _json_safe(measured),
            }
        )
        all_ok = all_ok and bool(ok)
    return rows, all_ok


def _required_attributes(reference_edit: Mapping[str, Any] | None) -> dict:
    out = {}
    for op in (reference_edit or {}).get("operations", []) or []:
        if isinstance(op, dict) and op.get("op") == "set_attribute":
            out[op.get("name")] = op.get("value")
    return out


def _newly_self_crossing(after: BaseGeometry, before: BaseGeometry) -> bool:
    """A line that crosses itself where the target did not (or was no line): no translation,
    rotation or scaling makes one, and measuring it costs quadratic time in its crossings."""
    lineal = ("LineString", "MultiLineString")
    if after.geom_type not in lineal or after.is_simple:
        return False
    return before.geom_type not in lineal or before.is_simple


def _scene_of(instance: Instance) -> Scene:
    """The instance's initial scene, read once per instance: every run that edits it is scored
    against the same one."""
    from scoring.geometry.scene import shared_scene

    return shared_scene(instance["scene"])


def _read_reference_geom(instance: Instance) -> BaseGeometry | None:
    """The target after the instance's reference edit (None when it cannot be applied)."""
    target = instance.get("target", "F0")
    try:
        reference = instance.get("reference_edit") or {"operations": []}
        ref = apply_edit(_scene_of(instance), target, reference, OPS)
        return ref.scene.geom(target)
    except (EditError, ValueError, shapely.errors.GEOSException):
        return None


# once per instance, however many runs edit it
_reference_geom = IdentityMemo(_read_reference_geom, maxsize=4096)


def _envelope(scene: Scene) -> tuple | None:
    geoms = [f.geom for f in scene.features if not f.geom.is_empty]
    if not geoms:
        return None
    return shapely.GeometryCollection(geoms).bounds


_initial_envelope = IdentityMemo(_envelope, maxsize=4096)  # of an instance's shared initial scene


@_never_raises
def score_edit(
    instance: Instance,
    text: str | None,
    *,
    modality: Modality = Modality.GEOJSON,
    status: str = "ok",
    error: str | None = None,
    pixel_transform: PixelTransform | None = None,
) -> Scored:
    """The verdict of one editing response: strict CSR, plus `raster_tolerant` for image edits."""
    failed = _failed(status, error)
    if failed:
        return failed
    image = _pixel_edits(modality)
    if image and pixel_transform is None:
        raise ValueError("image edits need the map's pixel_transform")
    parsed = answers.parse_edit(text)
    if parsed.refusal:
        if not _answerable(instance, modality):
            return Scored(Verdict.CORRECT_REFUSAL, "refused on an unanswerable instance")
        return Scored(Verdict.WRONG, "refusal")
    if not parsed.ok:
        return Scored(Verdict.UNPARSED, parsed.reason or "unparsed")
    edit = parsed.value
    value = _json_safe(edit)
    if not _answerable(instance, modality):
        return Scored(Verdict.UNFOUNDED_ANSWER, "edited an unanswerable instance", value)

    target = instance.get("target", "F0")
    allowed = tuple(instance.get("allowed_operations") or OPS)
    initial = _scene_of(instance)
    if target not in initial:
        return Scored(Verdict.WRONG, f"target {target} is not in the scene", value)
    result = _apply(edit, initial, target, allowed, image, pixel_transform, modality)
    if isinstance(result, Scored):
        result.value = value
        return result
    edited, changed, pixel_geom = result
    rejected = _screened(edited, initial, target, changed, instance, value, image)
    if rejected:
        return rejected
    try:  # facts after an edit are computed on the 1 cm grid, as the builder's (scoring.constraints.edits)
        edited = edited.replace(target, geom=snap_edited(edited.geom(target)))
    except (EditError, shapely.errors.GEOSException) as exc:
        return Scored(Verdict.WRONG, f"invalid edit: {exc}"[:300], value)
    rows, all_ok = _constraint_rows(edited, instance.get("constraints") or [], initial)
    reference_geom = _reference_geom(instance)
    quality = _hausdorff(edited.geom(target), reference_geom)
    raster, reason_px = (
        _raster_tolerance(instance, edited[target].props, all_ok, reference_geom, pixel_geom, pixel_transform)
        if image
        else (None, "")
    )
    scene_json = edited.to_geojson()
    if all_ok:
        reason = f"all {len(rows)} constraints hold"
    else:
        reason = _missed_reason(rows) + (" — raster-tolerant success" if raster else "") + reason_px
    verdict = Verdict.CORRECT if all_ok else Verdict.WRONG
    return Scored(verdict, reason[:400], value, quality, rows, scene_json, raster_tolerant=raster)


def _missed_reason(rows: list[dict]) -> str:
    """The first constraint an edit misses, and how many more."""
    failed_rows = [r for r in rows if not r["passed"]]
    reason = f"constraint {failed_rows[0]['index'] + 1} fails: {failed_rows[0]['text']}"
    return reason + (f" (+{len(failed_rows) - 1} more)" if len(failed_rows) > 1 else "")


def _screened(
    edited: Any, initial: Any, target: str, changed: bool, instance: Instance, value: Any, image: bool
) -> Scored | None:
    """The wrong verdict of an edit whose geometry fails the screening or that changed nothing."""
    geom, before = edited.geom(target), initial.geom(target)
    screen = vertex_budget(geom, before) or screen_geometry(geom, instance, _initial_envelope(initial))
    if screen is None and _newly_self_crossing(geom, before):
        screen = "invalid"
    tolerant = False if image else None  # an image edit rejected here is a raster-tolerant failure too
    if screen:
        reason = f"geometry screening: {screen}"
        return Scored(Verdict.WRONG, reason, value, screen=screen, raster_tolerant=tolerant)
    if not changed:
        scene = edited.to_geojson()
        reason = "no change: the target is unchanged"
        return Scored(Verdict.WRONG, reason, value, edited_scene=scene, raster_tolerant=tolerant)
    return None


def _hausdorff(geom: BaseGeometry, reference_geom: BaseGeometry | None) -> float | None:
    """The edit's quality: Hausdorff distance (m) of the edited target to the reference edit."""
    if reference_geom is None:
        return None
    try:
        quality = round(float(geom.hausdorff_distance(reference_geom)), 4)
    except (ValueError, shapely.errors.GEOSException):
        return None
    return quality if math.isfinite(quality) else None


def _raster_tolerance(
    instance: Instance,
    props: dict,
    all_ok: bool,
    reference_geom: BaseGeometry | None,
    pixel_geom: BaseGeometry | None,
    pixel_transform: Any,
) -> tuple[bool, str]:
    """(raster-tolerant success, what the reason adds) of an image edit: its constraints hold, or
    it lies within RASTER_TOLERANCE_PX (Hausdorff, in the map's pixels) of the reference edit
    with the required attributes."""
    if all_ok or reference_geom is None or pixel_geom is None:
        return all_ok, ""
    ref_px = pixel_transform.geometry_task_to_pixel(reference_geom)
    hd = float(pixel_geom.hausdorff_distance(ref_px))
    required = _required_attributes(instance.get("reference_edit"))
    attrs_ok = all(props.get(k) == v for k, v in required.items())
    raster = bool(math.isfinite(hd) and hd <= RASTER_TOLERANCE_PX and attrs_ok)
    return raster, f"; Hausdorff to the reference {hd:.1f} px" + ("" if attrs_ok else ", attributes differ")


def _apply(
    edit: dict,
    initial: Scene,
    target: str,
    allowed: tuple,
    image: bool,
    pt: Any,  # a PixelTransform when `image` (score_edit makes sure)
    modality: Modality,
) -> tuple[Scene, bool, BaseGeometry | None] | Scored:
    """(edited scene, changed, target geometry in pixels or None) or a Scored when it fails."""
    before = initial.geom(target)
    try:
        if "operations" in edit:
            if not edit["operations"]:
                return Scored(Verdict.WRONG, "empty prediction: no operations")
            if not image:
                res = apply_edit(initial, target, edit, allowed)
                return res.scene, res.changed, None
            # Attributes through the executor, geometry in pixel space.
            attr_ops = [o for o in edit["operations"] if o.get("op") == "set_attribute"]
            for o in edit["operations"]:
                if o.get("op") not in allowed:
                    raise EditError(f"operation {o.get('op')} is not allowed here")
            res = apply_edit(initial, target, {"operations": attr_ops}, allowed)
            px_before = pt.geometry_task_to_pixel(before)
            px_after = _flip(apply_geometry_ops(_flip(px_before), _pixel_ops_to_screen(edit["operations"])))
            if px_after.is_empty:
                raise EditError("the edit leaves an empty geometry")
            moved = not px_after.equals_exact(px_before, 1e-9)
            # An unmoved target keeps its exact coordinates (no round-trip noise).
            after = pt.geometry_pixel_to_task(px_after) if moved else before
            return res.scene.replace(target, geom=after), moved or res.changed_attributes, px_after
        # An edited geometry, with the attributes beside it (the paper's interface), or attributes alone.
        attr_ops = [
            {"op": "set_attribute", "name": k, "value": v} for k, v in (edit.get("attributes") or {}).items()
        ]
        res = apply_edit(initial, target, {"operations": attr_ops}, allowed)
        if not any(k in edit for k in ("geometry", "pixel_geometry")):
            return res.scene, res.changed_attributes, pt.geometry_task_to_pixel(before) if image else None
        key = "pixel_geometry" if "pixel_geometry" in edit else "geometry"
        if key == "pixel_geometry" and not image:
            return Scored(Verdict.WRONG, "pixel geometry given in a modality without a map")
        geom = shape(edit[key])
        px = None
        if image:  # on the image modality any returned geometry is in pixels
            px = geom
            geom = pt.geometry_pixel_to_task(geom) if not geom.is_empty else geom
        changed = geom.is_empty or not geom.equals_exact(before, 1e-9)
        return res.scene.replace(target, geom=geom), changed or res.changed_attributes, px
    except EditError as exc:
        return Scored(Verdict.WRONG, f"invalid edit: {exc}"[:300])
    except (ValueError, TypeError, AttributeError, shapely.errors.GEOSException) as exc:
        return Scored(Verdict.WRONG, f"invalid geometry: {type(exc).__name__}")


# --------------------------------------------------------------------------------- dispatch


@lru_cache(maxsize=4096)
def _pixel_transform(path: str) -> PixelTransform:
    return PixelTransform.from_sidecar(path)


def load_pixel_transform(
    bench_dir: str | Path, instance_id: str, modality: Modality = Modality.IMAGE
) -> PixelTransform:
    """The recorded transform of the map an edit of ``modality`` is expressed on (the instance's
    map; in a map-set modality the set's edit map), cached: one read per map per process."""
    map_id = edit_map_id(Path(bench_dir) / "maps", instance_id, modality)
    p = Path(bench_dir) / "maps" / f"{map_id}.json"
    if not p.exists():
        from scoring.errors import InputError

        raise InputError(f"{p}: no map sidecar (render the benchmark's maps before scoring image edits)")
    return _pixel_transform(str(p.resolve()))


@_never_raises
def score_prediction(instance: Instance, record: dict, bench_dir: str | Path) -> Scored:
    """The verdict of one final prediction-journal record for `instance`. The instance decides the
    task (a record cannot turn an edit instance into a question); the record gives the form,
    modality, status and text."""
    task = instance.get("task") or record.get("task")
    # a journal holds the modality as a string: read once into the enum (an unknown one is scored as geojson)
    modality = Modality(record["modality"]) if record.get("modality") in MODALITIES else Modality.GEOJSON
    status = record.get("status") or "error"
    text = record.get("text")
    if task == "edit":
        pt = None
        if _pixel_edits(modality) and status == "ok":
            pt = load_pixel_transform(bench_dir, instance["id"], modality)
        return score_edit(
            instance, text, modality=modality, status=status, error=record.get("error"), pixel_transform=pt
        )
    form = record.get("form") if record.get("form") in ("open", "mcq") else "open"
    return score_qa(instance, text, form=form, modality=modality, status=status, error=record.get("error"))
