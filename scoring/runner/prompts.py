"""THE one place defining what a model receives, per task x modality x form.

    geojson  : scene GeoJSON + question/instruction text, no image
    image    : map image + question/instruction text; no coordinates, no GeoJSON
    together : both

Templates live in resources/prompts/ as `<task>-<form>-<modality>.j2` (QA) and
`edit-<modality>.j2`; each starts with a `{#- version: N -#}` marker. Each template defines the
blocks `system` and `user` (edit templates also `corrective`, the single follow-up turn sent
when an edit reply is unusable). The template name, version and SHA-256 (of the template and
the shared `_common.j2`, and the answer wording it sends) are recorded with every prediction and
are part of the cache key.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import jinja2

from scoring.answers.formats import ANSWER_FORMATS, instructions
from scoring.answers.structured import answer_schema, json_request
from scoring.formats.benchmark import edit_reply_form
from scoring.formats.mapsets import MapSet
from scoring.formats.records import Instance
from scoring.geometry.georef import grid_convergence_deg
from scoring.paths import RESOURCES_DIR
from scoring.runner.client import png_data_url
from scoring.runner.images import user_content
from scoring.support.files import canonical_json
from scoring.support.memo import IdentityMemo
from scoring.vocab import MAP_SET_MODALITIES, MODALITIES, QA_FORMS, AnswerType, Form, Modality, Task

PROMPTS_DIR = RESOURCES_DIR / "prompts"
IMAGE_SIZE = 1536
_VERSION = re.compile(r"^\{#-?\s*version:\s*([^\s#-][^\s#]*)")


@dataclass(frozen=True)
class TemplateInfo:
    name: str
    version: str
    sha256: str  # the template's files and the wording it uses for one answer category
    # The checksum before #26, over every answer instruction: a journal written then is matched
    # through it while no instruction has changed since (then no text sent has changed either).
    legacy_sha256: str | None = None


def template_name(task: str, modality: Modality, form: str | None, reply_form: str = "operations") -> str:
    if modality not in MODALITIES:
        raise ValueError(f"unknown modality {modality!r} (expected {', '.join(MODALITIES)})")
    if task == Task.QA:
        if form not in QA_FORMS:
            raise ValueError(f"unknown QA form {form!r} (expected {' or '.join(QA_FORMS)})")
        return f"qa-{form}-{modality}"
    if task == Task.EDIT:
        if form not in (Form.EDIT, None):
            raise ValueError(f"edit instances have a single form 'edit', got {form!r}")
        # the paper protocol's map-image edits are replied as an edited pixel geometry
        return f"edit-{modality}-pixel-geometry" if reply_form == "pixel_geometry" else f"edit-{modality}"
    raise ValueError(f"unknown task {task!r} (expected qa or edit)")


@cache
def _env(prompts_dir: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(prompts_dir)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=False,
        auto_reload=False,  # templates are part of the installed package: no stat per request
    )
    # Globals, so that _common.j2's macros see them when imported without context.
    env.globals.update(answer_instructions=ANSWER_INSTRUCTIONS, open_refusal=OPEN_REFUSAL)
    return env


def wording_used(name: str, category: str | None) -> dict[str, Any]:
    """The shared wording a template sends, which its checksum covers: a choice question's
    instruction, or an open question's instruction for its answer category (`category`) and the
    refusal invitation; an edit uses none. Adding an answer format changes no other template's."""
    if name.startswith("qa-mcq-"):
        return {"answer_instructions": {"choice": ANSWER_INSTRUCTIONS["choice"]}}
    if name.startswith("qa-open-"):
        if category not in ANSWER_INSTRUCTIONS:
            raise ValueError(f"template {name}: unknown answer category {category!r}")
        return {
            "answer_instructions": {category: ANSWER_INSTRUCTIONS[category]},
            "open_refusal": OPEN_REFUSAL,
        }
    return {}


@cache
def _files_hash(prompts_dir: Path, name: str) -> tuple[str, Any]:
    """(version, SHA-256 state over the template and the shared files it imports)."""
    path = prompts_dir / f"{name}.j2"
    src = path.read_text(encoding="utf-8")
    m = _VERSION.match(src)
    if not m:
        raise ValueError(f"{path}: template must start with a '{{#- version: N -#}}' marker")
    h = hashlib.sha256(src.encode("utf-8"))
    h.update((prompts_dir / "_common.j2").read_bytes())
    if name.endswith(tuple(f"-{m}" for m in MAP_SET_MODALITIES)):  # their shared wording lives in _maps.j2
        h.update((prompts_dir / "_maps.j2").read_bytes())
    return m.group(1), h


@cache
def _info(prompts_dir: Path, name: str, category: str | None = None) -> TemplateInfo:
    version, files = _files_hash(prompts_dir, name)
    h, legacy = files.copy(), files.copy()
    h.update(canonical_json(wording_used(name, category)).encode("utf-8"))
    legacy.update(
        canonical_json({"answer_instructions": ANSWER_INSTRUCTIONS, "open_refusal": OPEN_REFUSAL}).encode()
    )
    return TemplateInfo(name, version, h.hexdigest(), legacy.hexdigest())


def default_category(task: str, form: str | None) -> str | None:
    """The answer category a template of `task` and `form` is hashed with when none is given."""
    return "choice" if form == Form.MCQ else None if task == Task.EDIT else "text"


def template_id_and_version(
    task: str, modality: Modality, form: str, prompts_dir: Path = PROMPTS_DIR
) -> tuple[str, str]:
    version, _ = _files_hash(prompts_dir, template_name(task, modality, form))
    return template_name(task, modality, form), version


def template_info(
    task: str,
    modality: Modality,
    form: str,
    prompts_dir: Path = PROMPTS_DIR,
    reply_form: str = "operations",
    category: str | None = None,
) -> TemplateInfo:
    """A template's name, version and checksum; an open question's depends on its answer
    category (`answer_category(instance["answer_type"])`, "text" when not given)."""
    name = template_name(task, modality, form, reply_form)
    return _info(prompts_dir, name, category or default_category(task, form))


def instance_template_info(instance: Instance, modality: Modality, form: str) -> TemplateInfo:
    """The template an instance is asked with in `modality` and `form`, hashed with the wording
    it is sent."""
    task = str(instance.get("task"))
    category = answer_category(instance.get("answer_type")) if form == Form.OPEN else None
    return template_info(
        task, modality, form, reply_form=reply_form_of(instance, modality), category=category
    )


def reply_form_of(instance: Instance, modality: Modality) -> str:
    """How an instance's edit is replied in a modality ("operations" unless the paper protocol
    asks for a pixel geometry)."""
    return edit_reply_form(instance, modality) if instance.get("task") == Task.EDIT else "operations"


# The answer instruction of each answer category (scoring.answers.formats), passed into the
# templates (_common.j2) and read back by the built-in agents: one definition for both. A
# template's checksum covers the instructions it sends (`wording_used`).
ANSWER_INSTRUCTIONS: dict[str, str] = instructions()
# Said after every open answer instruction (a choice question offers the refusal as an option).
OPEN_REFUSAL = 'If the information given is insufficient to answer, answer "cannot be determined".'
ANSWER_CATEGORIES: dict[AnswerType, str] = {f.type: f.category for f in ANSWER_FORMATS.values()}


def answer_category(answer_type: str | None) -> str:
    """The answer-instruction category of an instance's answer_type ("text" when it has none)."""
    if answer_type is None:
        return "text"
    try:
        return ANSWER_CATEGORIES[AnswerType(answer_type)]
    except ValueError:
        raise ValueError(f"unknown answer_type {answer_type!r}") from None


def crs_name(scene: Mapping[str, Any]) -> str:
    crs = scene.get("crs") if isinstance(scene, Mapping) else None
    if isinstance(crs, dict):
        props = crs.get("properties") or {}
        if isinstance(props, dict) and props.get("name"):
            return str(props["name"])
    if isinstance(crs, str):
        return crs
    return "given in the scene's crs member"


def _context(instance: Instance, modality: Modality, map_set: MapSet | None = None) -> dict[str, Any]:
    scene: Mapping[str, Any] = instance.get("scene") or {}
    ctx: dict[str, Any] = {
        "image_size": IMAGE_SIZE,
        "question": instance.get("question", ""),
        "choices": instance.get("choices") or [],
        "answer_type": instance.get("answer_type"),
        "answer_category": answer_category(instance.get("answer_type")),
        # the paper protocol's prompts carry no refusal invitation (resources/prompts/_common.j2)
        "protocol": instance.get("protocol") or "spatialgap",
        "target": instance.get("target", ""),
        "instruction": instance.get("instruction", ""),
        "scene_json": "",
        "crs_name": "",
    }
    if Modality(modality).has_coordinates:  # the image modality never sees coordinates
        ctx["scene_json"] = _scene_json(scene)
        ctx["crs_name"] = crs_name(scene)
    ctx["grid_north_deg"] = _grid_north(instance) if Modality(modality).has_image else None
    # the cross-map templates say what each map shows (by the labels drawn) and where edits go
    ctx["maps"] = (
        [{"role": m.get("role"), "features": m.get("features") or []} for m in map_set.maps]
        if map_set
        else []
    )
    ctx["edit_map_number"] = map_set.edit_map + 1 if map_set else 1
    return ctx


# An instance's scene is sent in both forms, several modalities and by every run of a sweep
# (which shares one read of the benchmark): serialised once per scene object.
_scene_json: IdentityMemo[Mapping[str, Any], str] = IdentityMemo(
    lambda scene: json.dumps(scene, ensure_ascii=False, separators=(",", ":")), maxsize=2048
)


def grid_north_on_map(instance: Instance) -> float | None:
    """Where the task CRS's grid north points on the north-up map (degrees clockwise from up), at
    the scene's centre: the question's bearings are grid bearings, and the few degrees between the
    two norths would otherwise exceed the 1° bearing tolerance for a model reading the map."""
    try:
        epsg = int(instance["crs"]["epsg"])
        xs: list[float] = []
        ys: list[float] = []
        for f in instance["scene"]["features"]:
            _vertices(f["geometry"]["coordinates"], xs, ys)
        return round(grid_convergence_deg(epsg, (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2), 2)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return None


def _vertices(coords: Any, xs: list[float], ys: list[float]) -> None:
    """Append the x and y of every position in GeoJSON `coordinates` (any nesting): the scene's
    extent without building its geometries."""
    if coords and isinstance(coords[0], (int, float)):
        xs.append(float(coords[0]))
        ys.append(float(coords[1]))
        return
    for c in coords:
        _vertices(c, xs, ys)


_grid_north: IdentityMemo[Instance, float | None] = IdentityMemo(grid_north_on_map, maxsize=2048)


def _render_block(name: str, block: str, ctx: dict, prompts_dir: Path) -> str:
    return _render_blocks(name, (block,), ctx, prompts_dir)[0]


def _render_blocks(name: str, blocks: tuple[str, ...], ctx: dict, prompts_dir: Path) -> list[str]:
    """Blocks of one template rendered in one context (blocks only read it)."""
    tmpl = _env(prompts_dir).get_template(f"{name}.j2")
    context = tmpl.new_context(ctx)
    return ["".join(tmpl.blocks[b](context)).strip() for b in blocks]


@lru_cache(maxsize=48)  # ~45 MB (PNGs and URLs); a map's forms, retries and parallel runs come close together
def map_data_url(image_png: bytes) -> str:
    """The PNG as a data URL, encoded once per map however often it is sent. Keyed by the bytes
    themselves (hashed once per bytes object), so a re-rendered map is never served stale."""
    return png_data_url(image_png)


# Every participant of a sweep is sent the same prompt for an instance, modality and form: its
# texts are rendered once per instance object (a few instances' worth: the runs go side by side).
_texts_of: IdentityMemo[Instance, dict[tuple, tuple[str, str]]] = IdentityMemo(lambda i: {}, maxsize=512)


def _prompt_texts(instance: Instance, name: str, modality: Modality, prompts_dir: Path) -> tuple[str, str]:
    texts = _texts_of(instance)
    key = (name, modality, prompts_dir)
    hit = texts.get(key)
    if hit is None:
        system, user = _render_blocks(name, ("system", "user"), _context(instance, modality), prompts_dir)
        hit = texts[key] = (system, user)
    return hit


def structured_schema(instance: Instance, form: str | None) -> dict[str, Any] | None:
    """The JSON schema a QA item's structured answer follows (None for an edit: its reply is
    already a JSON object, of the edit's own form)."""
    if instance.get("task") != "qa":
        return None
    choices = instance.get("choices") if form == "mcq" else None
    return answer_schema(str(instance.get("answer_type")), choices or None)


def build_messages(
    instance: Instance,
    modality: Modality,
    form: str | None,
    image_png: bytes | MapSet | None,
    prompts_dir: Path = PROMPTS_DIR,
    *,
    answer_format: str = "text",
) -> list[dict]:
    """Chat messages (OpenAI format) for one instance in one modality and form. A map-set modality
    (image-multi, image-context) takes its MapSet: every map is sent, in the set's order.
    ``answer_format="json"``: a QA item's system message also asks for the structured answer."""
    task = str(instance.get("task"))
    form = "edit" if task == "edit" else form
    name = template_name(task, modality, form, reply_form_of(instance, modality))
    # 4 options; 3 for O06 (option-count); 2 (yes / no) for the paper protocol's yes/no questions
    if task == "qa" and form == "mcq" and len(instance.get("choices") or []) not in (2, 3, 4):
        raise ValueError(f"instance {instance.get('id')}: mcq form needs 2 to 4 choices")
    needs_image = Modality(modality).has_image
    if needs_image and not image_png:
        raise ValueError(f"instance {instance.get('id')}: modality {modality} needs the map image")
    map_set = image_png if isinstance(image_png, MapSet) else None
    if Modality(modality).map_set and (map_set is None or not map_set.pngs):
        raise ValueError(f"instance {instance.get('id')}: modality {modality} needs its map set")
    if map_set is None:
        system, user = _prompt_texts(instance, name, modality, prompts_dir)
    else:
        system, user = _render_blocks(
            name, ("system", "user"), _context(instance, modality, map_set), prompts_dir
        )
    if map_set is not None:
        labels = [f"Map {i + 1}" for i in range(len(map_set.pngs))]
        content: Any = user_content(user, [map_data_url(png) for png in map_set.pngs], labels)
    elif needs_image and isinstance(image_png, bytes):
        content = [
            {"type": "text", "text": user},
            {"type": "image_url", "image_url": {"url": map_data_url(image_png)}},
        ]
    else:
        content = user
    schema = structured_schema(instance, form) if answer_format == "json" else None
    if schema is not None:
        system = f"{system}\n\n{json_request(schema)}"
    return [{"role": "system", "content": system}, {"role": "user", "content": content}]


def with_image_detail(messages: list[dict], detail: str) -> list[dict]:
    """`messages` with each image part's `detail` set where it names none: what the endpoint body
    carries (scoring.runner.endpoints.openai.build_body sets the model config's image_detail)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = [
                {"type": "image_url", "image_url": {"detail": detail, **p["image_url"]}}
                if p.get("type") == "image_url"
                else p
                for p in content
            ]
            m = {**m, "content": content}
        out.append(m)
    return out


def corrective_messages(
    instance: Instance,
    modality: Modality,
    messages: list[dict],
    reply: str,
    reason: str,
    prompts_dir: Path = PROMPTS_DIR,
) -> list[dict]:
    """`messages` + the model's unusable edit reply + ONE corrective user turn.

    `reason` says only why the reply is unusable as an edit (undecodable / no-op); it never
    reveals whether the edit met the instance's constraints."""
    name = template_name("edit", modality, "edit", reply_form_of(instance, modality))
    ctx = {**_context(instance, modality), "reason": reason}
    text = _render_block(name, "corrective", ctx, prompts_dir)
    return [*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": text}]
