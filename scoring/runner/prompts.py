"""THE one place defining what a model receives, per task x modality x form.

    geojson  : scene GeoJSON + question/instruction text, no image
    image    : map image + question/instruction text; no coordinates, no GeoJSON
    together : both

Templates live in resources/prompts/ as `<task>-<form>-<modality>.j2` (QA) and
`edit-<modality>.j2`; each starts with a `{#- version: N -#}` marker. Each template defines the
blocks `system` and `user` (edit templates also `corrective`, the single follow-up turn sent
when an edit reply is unusable). The template name, version and SHA-256 (of the template and
the shared `_common.j2`) are recorded with every prediction and are part of the cache key.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from shapely.geometry import shape

import scoring
from scoring.runner.client import png_data_url

PROMPTS_DIR = Path(scoring.__file__).resolve().parent.parent / "resources" / "prompts"
MODALITIES = ("geojson", "image", "together")
QA_FORMS = ("open", "mcq")
IMAGE_SIZE = 1536
_VERSION = re.compile(r"^\{#-?\s*version:\s*([^\s#-][^\s#]*)")


@dataclass(frozen=True)
class TemplateInfo:
    name: str
    version: str
    sha256: str


def template_name(task: str, modality: str, form: str) -> str:
    if modality not in MODALITIES:
        raise ValueError(f"unknown modality {modality!r} (expected {', '.join(MODALITIES)})")
    if task == "qa":
        if form not in QA_FORMS:
            raise ValueError(f"unknown QA form {form!r} (expected open or mcq)")
        return f"qa-{form}-{modality}"
    if task == "edit":
        if form not in ("edit", None):
            raise ValueError(f"edit instances have a single form 'edit', got {form!r}")
        return f"edit-{modality}"
    raise ValueError(f"unknown task {task!r} (expected qa or edit)")


@cache
def _env(prompts_dir: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(prompts_dir)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=False,
    )


@cache
def _info(prompts_dir: Path, name: str) -> TemplateInfo:
    path = prompts_dir / f"{name}.j2"
    src = path.read_text(encoding="utf-8")
    m = _VERSION.match(src)
    if not m:
        raise ValueError(f"{path}: template must start with a '{{#- version: N -#}}' marker")
    h = hashlib.sha256(src.encode("utf-8"))
    h.update((prompts_dir / "_common.j2").read_bytes())
    return TemplateInfo(name, m.group(1), h.hexdigest())


def template_id_and_version(
    task: str, modality: str, form: str, prompts_dir: Path = PROMPTS_DIR
) -> tuple[str, str]:
    info = _info(prompts_dir, template_name(task, modality, form))
    return info.name, info.version


def template_info(task: str, modality: str, form: str, prompts_dir: Path = PROMPTS_DIR) -> TemplateInfo:
    return _info(prompts_dir, template_name(task, modality, form))


def answer_category(answer_type: str | None) -> str:
    """Map an instance's answer_type onto one of the answer-instruction wordings in _common.j2."""
    t = (answer_type or "").lower()
    exact = {
        "direction4": "direction4",
        "direction8": "direction",
        "relative_direction": "relative_direction",
        "axis": "axis",
        "ordering": "ordering",
        "density": "density",
        "perimeter": "metres",
        "distance": "metres",
        "bearing": "degrees",
        "count": "count",
        "feature_id": "feature_id",
    }
    if t in exact:
        return exact[t]
    if t in ("choice", "mcq", "letter", "option"):
        return "choice"
    if t in ("bool", "boolean", "yes_no", "yesno"):
        return "boolean"
    if "area" in t or "m2" in t or "sq" in t:
        return "square_metres"
    if any(k in t for k in ("bearing", "angle", "deg", "azimuth", "orientation")):
        return "degrees"
    if any(k in t for k in ("distance", "length", "metre", "meter", "perimeter", "width")) or t.endswith(
        "_m"
    ):
        return "metres"
    if "count" in t or t in ("int", "integer"):
        return "count"
    if t in ("feature_ids", "ids", "id_list", "feature_list", "set"):
        return "feature_ids"
    if "id" in t or "feature" in t:
        return "feature_id"
    if "direction" in t or "compass" in t or "cardinal" in t:
        return "direction"
    if t in ("number", "float", "numeric"):
        return "metres"
    return "text"


def crs_name(scene: dict) -> str:
    crs = scene.get("crs") if isinstance(scene, dict) else None
    if isinstance(crs, dict):
        props = crs.get("properties") or {}
        if isinstance(props, dict) and props.get("name"):
            return str(props["name"])
    if isinstance(crs, str):
        return crs
    return "given in the scene's crs member"


def _context(instance: dict, modality: str) -> dict[str, Any]:
    scene = instance.get("scene") or {}
    ctx: dict[str, Any] = {
        "image_size": IMAGE_SIZE,
        "question": instance.get("question", ""),
        "choices": instance.get("choices") or [],
        "answer_type": instance.get("answer_type"),
        "answer_category": answer_category(instance.get("answer_type")),
        "target": instance.get("target", ""),
        "instruction": instance.get("instruction", ""),
        "scene_json": "",
        "crs_name": "",
    }
    if modality != "image":  # the image modality never sees coordinates
        ctx["scene_json"] = json.dumps(scene, ensure_ascii=False, separators=(",", ":"))
        ctx["crs_name"] = crs_name(scene)
    ctx["grid_north_deg"] = grid_north_on_map(instance) if modality != "geojson" else None
    return ctx


def grid_north_on_map(instance: dict) -> float | None:
    """Where the task CRS's grid north points on the north-up map (degrees clockwise from up), at
    the scene's centre: the question's bearings are grid bearings, and the few degrees between the
    two norths would otherwise exceed the 1° bearing tolerance for a model reading the map."""
    # Imported here: the scoring.render package pulls in matplotlib, which GeoJSON-only runs
    # (and the QGIS plugin's start-up) do not need.
    from scoring.render.transform import grid_convergence_deg

    try:
        epsg = int((instance.get("crs") or {})["epsg"])
        xs, ys = [], []
        for f in instance["scene"]["features"]:
            b = shape(f["geometry"]).bounds
            xs += [b[0], b[2]]
            ys += [b[1], b[3]]
        return round(grid_convergence_deg(epsg, (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2), 2)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _render_block(name: str, block: str, ctx: dict, prompts_dir: Path) -> str:
    tmpl = _env(prompts_dir).get_template(f"{name}.j2")
    return "".join(tmpl.blocks[block](tmpl.new_context(ctx))).strip()


def build_messages(
    instance: dict, modality: str, form: str | None, image_png: bytes | None, prompts_dir: Path = PROMPTS_DIR
) -> list[dict]:
    """Chat messages (OpenAI format) for one instance in one modality and form."""
    task = instance.get("task")
    form = "edit" if task == "edit" else form
    name = template_name(task, modality, form)
    if task == "qa" and form == "mcq" and len(instance.get("choices") or []) != 4:
        raise ValueError(f"instance {instance.get('id')}: mcq form needs 4 choices")
    needs_image = modality in ("image", "together")
    if needs_image and not image_png:
        raise ValueError(f"instance {instance.get('id')}: modality {modality} needs the map image")
    ctx = _context(instance, modality)
    system = _render_block(name, "system", ctx, prompts_dir)
    user = _render_block(name, "user", ctx, prompts_dir)
    if needs_image:
        content: Any = [
            {"type": "text", "text": user},
            {"type": "image_url", "image_url": {"url": png_data_url(image_png)}},
        ]
    else:
        content = user
    return [{"role": "system", "content": system}, {"role": "user", "content": content}]


def corrective_messages(
    instance: dict,
    modality: str,
    messages: list[dict],
    reply: str,
    reason: str,
    prompts_dir: Path = PROMPTS_DIR,
) -> list[dict]:
    """`messages` + the model's unusable edit reply + ONE corrective user turn.

    `reason` says only why the reply is unusable as an edit (undecodable / no-op); it never
    reveals whether the edit met the instance's constraints."""
    name = template_name("edit", modality, "edit")
    ctx = {**_context(instance, modality), "reason": reason}
    text = _render_block(name, "corrective", ctx, prompts_dir)
    return [*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": text}]
