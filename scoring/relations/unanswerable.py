"""Unanswerable items built on purpose: variants of answerable siblings where only the information
differs (same question or instruction wording, same scene but for one change), so that the right
reply is a refusal. Every variant records its kind, a reason and the facts a re-checker needs in
``instance["unanswerable"]``; :func:`verify_unanswerable` recomputes why from the instance alone.

Kinds (QA):
- ``missing_feature``: the question names a feature the scene does not contain (the highest
  numbered feature the question names is removed from the scene).
- ``coincident_points``: a direction question between two point features at the same position:
  the bearing of a zero-length vector is undefined.
- ``sector_edge``: a direction or axis question whose bearing lies within the bearing tolerance
  (1°) of a sector edge: the two neighbouring answers are equally right.
- ``withheld_attribute``: an O06 question whose roads carry none of the level attributes.
- ``no_area``: a perimeter, area or density question about a polygon the data give as a point.
Kind (editing, scoring.relations.unanswerable_edit): ``infeasible_reach``.

The builder calls :func:`add_unanswerable` once per shard, after the answerable items; choices
are a pure function of (seed, sibling id), so builds stay byte-identical.
"""

from __future__ import annotations

import copy
import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shapely import affinity
from shapely.geometry import Point, mapping, shape
from shapely.geometry.base import BaseGeometry

from scoring.errors import InputError
from scoring.geometry.scene import snap
from scoring.oracle.core import azimuth, ref_point, sector
from scoring.relations.base import REFUSAL, TOLERANCES
from scoring.vocab import DEFAULT_SHARE, MODALITIES, AnswerType, Protocol, Task

FIRST_NUMBER = 900  # unanswerable ids are numbered from here: <city>-<task>-<code>-9NN
EDGE_TOLERANCE = TOLERANCES[AnswerType.BEARING]  # degrees: the scorer's bearing tolerance
FEATURE_ID = re.compile(r"\bF\d+\b")
HEADING = re.compile(r"heading (\d+(?:\.\d+)?)°")
ALL_MODALITIES = [str(m) for m in MODALITIES]


class UnanswerableError(ValueError):
    """An instance's recorded reason does not hold (or it records none)."""


@dataclass(frozen=True)
class Kind:
    """One way to make an item unanswerable: which siblings it fits, how to make it, how to
    re-check it, and what the relation reference says about it."""

    name: str
    task: Task
    doc: str
    make: Callable[[dict], tuple[dict, dict] | None]  # sibling -> (new scene, record) or None
    verify: Callable[[dict], str]  # instance -> reason (raises UnanswerableError)


# ------------------------------------------------------------------ scene helpers


def named_ids(text: str) -> list[str]:
    """Feature ids a question names, in order of first mention."""
    return list(dict.fromkeys(FEATURE_ID.findall(text)))


def _feature(scene: dict, fid: str) -> dict | None:
    return next((f for f in scene["features"] if f["id"] == fid), None)


def _geom(scene: dict, fid: str) -> BaseGeometry:
    f = _feature(scene, fid)
    if f is None:
        raise UnanswerableError(f"the scene has no feature {fid}")
    return shape(f["geometry"])


def _with_geometry(scene: dict, fid: str, geom: BaseGeometry) -> dict:
    out = copy.deepcopy(scene)
    f = _feature(out, fid)
    assert f is not None
    f["geometry"] = mapping(geom)
    f["geometry"] = {"type": f["geometry"]["type"], "coordinates": _listed(f["geometry"]["coordinates"])}
    return out


def _listed(c: Any) -> Any:
    return [_listed(x) for x in c] if isinstance(c, (list, tuple)) and not _is_xy(c) else list(c)


def _is_xy(c: Any) -> bool:
    return isinstance(c, (list, tuple)) and len(c) in (2, 3) and all(isinstance(v, (int, float)) for v in c)


# ------------------------------------------------------------------ missing_feature


def _make_missing(inst: dict) -> tuple[dict, dict] | None:
    ids = [f["id"] for f in inst["scene"]["features"]]
    present = [i for i in named_ids(inst["question"]) if i in ids]
    if not present or len(ids) < 2:
        return None
    gone = max(present, key=lambda i: int(i[1:]))
    scene = copy.deepcopy(inst["scene"])
    scene["features"] = [f for f in scene["features"] if f["id"] != gone]
    return scene, {"missing": gone, "named": named_ids(inst["question"])}


def _verify_missing(inst: dict) -> str:
    ids = {f["id"] for f in inst["scene"]["features"]}
    absent = [i for i in named_ids(inst["question"]) if i not in ids]
    recorded = inst["unanswerable"].get("missing")
    if recorded not in absent:
        raise UnanswerableError(f"{inst['id']}: the question names no absent feature {recorded}")
    return f"the question names {recorded}, which the scene does not contain"


# ------------------------------------------------------------------ coincident_points

_BEARING_TYPES = {
    AnswerType.DIRECTION4,
    AnswerType.DIRECTION8,
    AnswerType.BEARING,
    AnswerType.RELATIVE_DIRECTION,
}


def _pair(inst: dict) -> tuple[str, str] | None:
    named = named_ids(inst.get("question") or "")
    return (named[0], named[1]) if len(named) >= 2 else None


def _make_coincident(inst: dict) -> tuple[dict, dict] | None:
    pair = _pair(inst)
    if inst.get("answer_type") not in _BEARING_TYPES or pair is None:
        return None
    a, b = (_geom(inst["scene"], i) for i in pair)
    if not (isinstance(a, Point) and isinstance(b, Point)):
        return None
    return _with_geometry(inst["scene"], pair[1], Point(a.x, a.y)), {"features": list(pair)}


def _verify_coincident(inst: dict) -> str:
    a_id, b_id = inst["unanswerable"]["features"]
    a, b = _geom(inst["scene"], a_id), _geom(inst["scene"], b_id)
    if not (isinstance(a, Point) and isinstance(b, Point) and (a.x, a.y) == (b.x, b.y)):
        raise UnanswerableError(f"{inst['id']}: {a_id} and {b_id} are not coincident points")
    return f"{a_id} and {b_id} are the same point ({a.x}, {a.y}): the bearing between them is undefined"


# ------------------------------------------------------------------ sector_edge


def edge_margin(question: str, answer_type: str, scene: dict) -> tuple[float, float] | None:
    """(bearing or axis azimuth asked about, its margin in degrees to the nearest sector edge),
    from the question and scene alone; None when the question asks no sector."""
    named = named_ids(question)
    if answer_type == AnswerType.AXIS and named:
        line = _geom(scene, named[0])
        az = azimuth(Point(line.coords[0]), Point(line.coords[-1])) % 180.0
        return az, sector(az * 2.0, 4)[1] / 2.0
    if answer_type not in (AnswerType.DIRECTION4, AnswerType.DIRECTION8, AnswerType.RELATIVE_DIRECTION):
        return None
    if len(named) < 2:
        return None
    p, q = ref_point(_geom(scene, named[0])), ref_point(_geom(scene, named[1]))
    if p.equals(q):
        return None
    b = azimuth(p, q)
    if answer_type == AnswerType.RELATIVE_DIRECTION:
        m = HEADING.search(question)
        if m is None:
            return None
        return b, sector((b - float(m.group(1))) % 360.0, 4)[1]
    return b, sector(b, 4 if answer_type == AnswerType.DIRECTION4 else 8)[1]


def _nearest_edge(angle: float, width: float, offset: float) -> float:
    """The sector edge nearest to angle, for edges at offset + width/2 + k * width."""
    k = round((angle - offset - width / 2.0) / width)
    return offset + width / 2.0 + k * width


def _make_edge(inst: dict) -> tuple[dict, dict] | None:
    at = inst.get("answer_type")
    named = named_ids(inst.get("question") or "")
    scene = inst["scene"]
    if at == AnswerType.AXIS and named:
        line = _geom(scene, named[0])
        first = Point(line.coords[0])
        az = azimuth(first, Point(line.coords[-1])) % 180.0
        edge = _nearest_edge(az, 45.0, 0.0)
        moved = snap(affinity.rotate(line, az - edge, origin=first))  # ccw degrees: bearing - delta
        return _checked_edge(inst, _with_geometry(scene, named[0], moved), named[0])
    if (
        at not in (AnswerType.DIRECTION4, AnswerType.DIRECTION8, AnswerType.RELATIVE_DIRECTION)
        or len(named) < 2
    ):
        return None
    a, b = _geom(scene, named[0]), _geom(scene, named[1])
    p, q = ref_point(a), ref_point(b)
    bear, dist = azimuth(p, q), p.distance(q)
    width = 90.0 if at != AnswerType.DIRECTION8 else 45.0
    offset = 0.0
    if at == AnswerType.RELATIVE_DIRECTION:
        m = HEADING.search(inst["question"])
        if m is None:
            return None
        offset = float(m.group(1))
    edge = math.radians(_nearest_edge(bear, width, offset))
    target = (p.x + dist * math.sin(edge), p.y + dist * math.cos(edge))
    moved = snap(affinity.translate(b, target[0] - q.x, target[1] - q.y))
    return _checked_edge(inst, _with_geometry(scene, named[1], moved), named[1])


def _checked_edge(inst: dict, scene: dict, moved: str) -> tuple[dict, dict] | None:
    got = edge_margin(inst["question"], inst["answer_type"], scene)
    if got is None or got[1] > EDGE_TOLERANCE / 2.0:  # well inside the tolerance, or not at all
        return None
    return scene, {
        "moved": moved,
        "angle": round(got[0], 6),
        "edge_margin_deg": round(got[1], 6),
        "tolerance_deg": EDGE_TOLERANCE,
    }


def _verify_edge(inst: dict) -> str:
    got = edge_margin(inst["question"], inst["answer_type"], inst["scene"])
    if got is None or got[1] > EDGE_TOLERANCE:
        raise UnanswerableError(f"{inst['id']}: the angle is not within {EDGE_TOLERANCE}° of a sector edge")
    return (
        f"the angle asked about is {got[0]:.3f}°, {got[1]:.3f}° from a sector edge (tolerance "
        f"{EDGE_TOLERANCE}°): the two neighbouring answers are equally right"
    )


# ------------------------------------------------------------------ withheld_attribute

LEVEL_ATTRS = ("layer", "bridge", "tunnel")


def _make_withheld(inst: dict) -> tuple[dict, dict] | None:
    if inst.get("relation") != "O06" or inst.get("protocol") == Protocol.PAPER:
        return None
    pair = _pair(inst)
    if pair is None:
        return None
    scene = copy.deepcopy(inst["scene"])
    for f in scene["features"]:
        if f["id"] in pair:
            f["properties"] = {k: v for k, v in (f.get("properties") or {}).items() if k not in LEVEL_ATTRS}
    return scene, {"features": list(pair), "withheld": list(LEVEL_ATTRS)}


def _verify_withheld(inst: dict) -> str:
    ids = inst["unanswerable"]["features"]
    for fid in ids:
        f = _feature(inst["scene"], fid)
        if f is None or any(k in (f.get("properties") or {}) for k in LEVEL_ATTRS):
            raise UnanswerableError(f"{inst['id']}: {fid} still carries a level attribute")
    attrs = ", ".join(LEVEL_ATTRS)
    return (
        f"the question needs the level attributes ({attrs}) of {' and '.join(ids)}, which the data withhold"
    )


# ------------------------------------------------------------------ no_area

_AREA_TYPES = {AnswerType.PERIMETER, AnswerType.AREA, AnswerType.DENSITY}


_LYING_IN = re.compile(r"lying in (F\d+)")


def area_needed(question: str, answer_type: str | None) -> list[str]:
    """The features whose area the question needs: every one named for a perimeter or an area,
    the one the POIs lie in for a density."""
    if answer_type == AnswerType.DENSITY:
        m = _LYING_IN.search(question)
        return [m.group(1)] if m else []
    return named_ids(question) if answer_type in _AREA_TYPES else []


def _make_no_area(inst: dict) -> tuple[dict, dict] | None:
    for fid in area_needed(inst.get("question") or "", inst.get("answer_type")):
        g = _geom(inst["scene"], fid)
        if g.geom_type == "Polygon":
            return _with_geometry(inst["scene"], fid, snap(g.representative_point())), {"point": fid}
    return None


def _verify_no_area(inst: dict) -> str:
    fid = inst["unanswerable"]["point"]
    needed = area_needed(inst.get("question") or "", inst.get("answer_type"))
    if fid not in needed or _geom(inst["scene"], fid).geom_type != "Point":
        raise UnanswerableError(f"{inst['id']}: {fid} is no point where an area is needed")
    return f"the question needs the {inst['answer_type']} of {fid}, which the data give as a point (no area)"


# ------------------------------------------------------------------ the kinds

QA_KINDS: tuple[Kind, ...] = (
    Kind(
        "missing_feature",
        Task.QA,
        "the question names a feature id the scene does not contain (`missing`); re-check: the id "
        "is among the question's `F<n>` tokens and not among the scene's feature ids.",
        _make_missing,
        _verify_missing,
    ),
    Kind(
        "coincident_points",
        Task.QA,
        "a bearing or direction question between two point features (`features`) at identical "
        "coordinates; re-check: both are Points with equal x and y, so the azimuth is undefined.",
        _make_coincident,
        _verify_coincident,
    ),
    Kind(
        "sector_edge",
        Task.QA,
        "a direction, relative-direction or axis question whose angle (`angle`: bearing between "
        "reference points, relative to the stated heading, or the folded chord azimuth) lies "
        "within the bearing tolerance (`tolerance_deg`, 1°) of a sector edge; re-check: recompute "
        "the angle and its margin to the nearest edge (as `sector` in scoring/oracle/core.py).",
        _make_edge,
        _verify_edge,
    ),
    Kind(
        "withheld_attribute",
        Task.QA,
        "an O06 question whose two roads (`features`) carry none of the level attributes the "
        "answer needs (`withheld`: layer, bridge, tunnel); re-check: neither named road has any of "
        "them among its properties.",
        _make_withheld,
        _verify_withheld,
    ),
    Kind(
        "no_area",
        Task.QA,
        "a perimeter, area or density question one of whose named polygons (`point`) the data give "
        "as a point: it has no perimeter or area; re-check: the feature's geometry is a Point and "
        "the answer type needs an area.",
        _make_no_area,
        _verify_no_area,
    ),
)


def _all_kinds() -> tuple[Kind, ...]:
    from scoring.relations.unanswerable_edit import EDIT_KINDS

    return QA_KINDS + EDIT_KINDS


def kind_named(name: str) -> Kind:
    """The kind of this name (QA or editing)."""
    for k in _all_kinds():
        if k.name == name:
            return k
    raise UnanswerableError(f"unknown unanswerable kind {name!r}")


# ------------------------------------------------------------------ building


def _rank(seed: int, text: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}\x1f{text}\x1funanswerable".encode()).digest()[:8], "big")


def share_count(n: int, share: float) -> int:
    """Unanswerable items for a shard of n answerable ones (half up: 25 at 0.1 -> 3)."""
    return 0 if share <= 0 or n == 0 else max(1, math.floor(n * share + 0.5))


def add_unanswerable(instances: list[dict], *, seed: int, share: float) -> list[dict]:
    """Unanswerable variants of a shard's answerable instances (to be appended after them):
    ``share_count`` of them, siblings in a seeded order, kinds rotated so each fits in turn."""
    answerable = [
        i
        for i in instances
        if "unanswerable" not in i and all((i.get("answerable") or {True: True}).values())
    ]
    want = share_count(len(answerable), share)
    if want == 0:
        return []
    kinds = [k for k in _all_kinds() if k.task == answerable[0]["task"]]
    out: list[dict] = []
    for sib in sorted(answerable, key=lambda i: _rank(seed, i["id"])):
        if len(out) == want:
            break
        start = _rank(seed, sib["id"] + "kind") % len(kinds)
        for kind in kinds[start:] + kinds[:start]:
            made = kind.make(sib)
            if made is not None:
                out.append(_variant(sib, kind, made, FIRST_NUMBER + len(out)))
                break
    return out


def _variant(sib: dict, kind: Kind, made: tuple[dict, dict], number: int) -> dict:
    scene, record = made
    inst = copy.deepcopy(sib)
    inst["id"] = sib["id"].rsplit("-", 1)[0] + f"-{number:03d}"
    inst["scene"] = scene
    ids = {f["id"] for f in scene["features"]}
    feats = inst["provenance"]["features"]
    inst["provenance"]["features"] = {k: v for k, v in feats.items() if k in ids}
    for fid in [record.get("moved"), *(record.get("features") or [])[1:]]:
        if fid in inst["provenance"]["features"]:
            inst["provenance"]["features"][fid] = {
                **inst["provenance"]["features"][fid],
                "origin": "constructed",
                "construction": f"moved for an unanswerable variant ({kind.name})",
            }
    if "map_properties" in inst:
        inst["map_properties"] = {k: v for k, v in inst["map_properties"].items() if k in ids}
    if kind.task == Task.QA:
        inst["answer"] = REFUSAL
        inst["correct_choice"] = None  # the sibling's options: none is right, a refusal is
    inst["answerable"] = dict.fromkeys(ALL_MODALITIES, False)
    inst["facts"] = []  # the sibling's facts no longer hold; the re-check facts are under `unanswerable`
    inst["margin"] = {}
    inst["unanswerable"] = {
        "kind": kind.name,
        "reason": "",
        "modalities": ALL_MODALITIES,
        "sibling": sib["id"],
        **record,
    }
    if kind.task == Task.EDIT:
        from scoring.relations.unanswerable_edit import finish_edit_variant

        finish_edit_variant(inst)
    inst["unanswerable"]["reason"] = kind.verify(inst)
    return inst


# ------------------------------------------------------------------ re-checking


def verify_unanswerable(instance: dict) -> str:
    """Why ``instance`` is unanswerable, recomputed from the instance alone (its scene, question or
    constraints, and the facts recorded under ``unanswerable``). Raises UnanswerableError when the
    recorded reason does not hold."""
    rec = instance.get("unanswerable")
    if not isinstance(rec, dict) or "kind" not in rec:
        raise UnanswerableError(f"{instance.get('id')}: records no unanswerable kind")
    return kind_named(str(rec["kind"])).verify(instance)


def prompt_reason(scene: dict, question: str, answer_type: str | None) -> str | None:
    """Why a question cannot be answered from this scene and question text (what a prompt gives),
    or None: the check an agent can make without the instance file."""
    ids = {f["id"] for f in scene.get("features", [])}
    absent = [i for i in named_ids(question) if i not in ids]
    if absent:
        return f"the scene has no {absent[0]}"
    named = named_ids(question)
    if answer_type in _BEARING_TYPES and len(named) >= 2:
        p, q = ref_point(_geom(scene, named[0])), ref_point(_geom(scene, named[1]))
        if p.equals(q):
            return f"{named[0]} and {named[1]} coincide"
    got = edge_margin(question, str(answer_type), scene) if answer_type else None
    if got is not None and got[1] <= EDGE_TOLERANCE:
        return f"the angle {got[0]:.2f}° lies on a sector edge"
    pointed = [i for i in area_needed(question, answer_type) if _geom(scene, i).geom_type == "Point"]
    if pointed:
        return f"{pointed[0]} is a point: it has no area"
    return None


def reference_section() -> str:
    """The relation reference's section on unanswerable items (resources/relations.md)."""
    lines = [
        "\n## Unanswerable items\n",
        f"Under `--protocol spatialgap` the builder adds, per relation and task, about "
        f"{DEFAULT_SHARE:.0%} unanswerable variants of answerable items (`--unanswerable-share`; 0 under "
        f"`--protocol paper`, whose only unanswerable items are O06 from the GeoJSON). They are numbered "
        f"from {FIRST_NUMBER} (`<city>-<task>-<code>-9NN`), are unanswerable in every modality "
        "(`answerable` all false), keep the sibling's wording, choices and scene but for one change, "
        '`answer` is "cannot be determined" and `correct_choice` null. `unanswerable` records `kind`, '
        "`reason`, `modalities`, `sibling` (the answerable instance it was made from) and the facts "
        "below; `verify_unanswerable` in scoring/relations/unanswerable.py recomputes the reason.\n",
        "Multiple choice offers no refusal option among its options (only O06's, by its own design, "
        'include "cannot be determined"). Under `--protocol spatialgap` the choice instruction lets a '
        "model write the refusal instead of a letter, and any refusal form the reader knows counts "
        "as one; under `--protocol paper` neither the options nor the instruction offer a refusal "
        "(the paper's prompts) and no variants are built.\n",
        "| kind | task | definition and re-check |",
        "|---|---|---|",
    ]
    lines += [f"| `{k.name}` | {k.task} | {k.doc} |" for k in _all_kinds()]
    return "\n".join(lines) + "\n"


def unanswerable_summary(share: float, instances: list[dict]) -> dict:
    """The manifest's record of the unanswerable variants: share, counts per task, family, kind."""
    made = [i for i in instances if "unanswerable" in i]
    per_family: dict[str, dict[str, int]] = {}
    per_kind: dict[str, int] = {}
    for i in made:
        fam = per_family.setdefault(i["family"], {"qa": 0, "edit": 0})
        fam[i["task"]] += 1
        per_kind[i["unanswerable"]["kind"]] = per_kind.get(i["unanswerable"]["kind"], 0) + 1
    return {
        "share": share,
        "qa": sum(1 for i in made if i["task"] == Task.QA),
        "edit": sum(1 for i in made if i["task"] == Task.EDIT),
        "per_family": dict(sorted(per_family.items())),
        "per_kind": dict(sorted(per_kind.items())),
    }


def check_share(share: float | None, protocol: str) -> float:
    """The share a build uses: the default of its protocol, or the one asked for (checked)."""
    if share is None:
        # protocol switch: unanswerable-variants
        return DEFAULT_SHARE if protocol == Protocol.SPATIALGAP else 0.0
    if not 0.0 <= share <= 1.0:
        raise InputError(f"--unanswerable-share {share}: expected a share from 0 to 1")
    if share > 0 and protocol == Protocol.PAPER:  # protocol switch: unanswerable-variants
        raise InputError(
            "--unanswerable-share: the paper protocol builds no unanswerable variants (only O06)"
        )
    return share


def unanswerable_lines(m: dict) -> list[str]:
    """The build report's lines on the unanswerable variants; a build without any says so (its
    runs then measure no refusal)."""
    u = m.get("unanswerable")
    if not u and not (m.get("counts") or {}).get("unanswerable_qa"):
        return [
            "No unanswerable item: this benchmark measures no refusal (unanswerable share 0; under "
            "`--protocol paper` only O06's GeoJSON condition lacks information).",
            "",
        ]
    if not u:
        return []
    fams = "; ".join(f"{f} {c['qa']} QA + {c['edit']} editing" for f, c in u["per_family"].items())
    kinds = ", ".join(f"{k} {n}" for k, n in u["per_kind"].items())
    return [
        f"Unanswerable variants (share {u['share']:g}, in addition to the answerable items): "
        f"{u['qa']} QA + {u['edit']} editing; {fams}. Kinds: {kinds}.",
        "",
    ]
