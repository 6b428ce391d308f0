"""The relation catalogue: one record per relation carrying its definition, question builder,
answer checker, distractor rule and edit constraints. Registered with `@relation(...)`.

Builders are pure functions of (pools, anchor, rng): the builder framework (scoring.build.builder)
decides which anchor and which seeded rng each instance slot gets.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from shapely.geometry.base import BaseGeometry

from scoring.answers.formats import ANSWER_FORMATS
from scoring.constraints.facts import make_fact
from scoring.constraints.wording import Wording
from scoring.extract.pools import FeaturePools, PoolFeature
from scoring.formats.records import Instance
from scoring.geometry.georef import CityCRS
from scoring.geometry.scene import Scene, SceneFeature, snap
from scoring.support.registry import Registry
from scoring.vocab import FAMILIES, REFUSAL, AnswerType, EditOp, Family

__all__ = ["CATALOGUE", "FAMILIES", "Relation", "Solver", "relation"]
LETTERS = "ABCD"

# Tolerances of the deterministic scorer and units, by answer type (scoring.answers.formats).
TOLERANCES: dict[AnswerType, float] = {
    f.type: f.tolerance for f in ANSWER_FORMATS.values() if f.tolerance is not None
}
UNITS: dict[AnswerType, str] = {f.type: f.unit for f in ANSWER_FORMATS.values() if f.unit is not None}


# ---------------------------------------------------------------- items produced by builders


@dataclass
class Member:
    """A feature placed in a scene, with where it came from."""

    kind: str
    geom: BaseGeometry
    props: dict = field(default_factory=dict)
    source: str | None = None  # OSM uid it came from
    construction: str | None = None  # how it was derived, if constructed

    @classmethod
    def of(cls, f: PoolFeature, props: dict | None = None) -> Member:
        return cls(f.kind, f.geom, props or {}, f.uid)

    def provenance(self) -> dict:
        d = {"osm": self.source, "origin": "constructed" if self.construction else "observed"}
        if self.construction:
            d["construction"] = self.construction
        return d


@dataclass
class QAItem:
    scene: Scene
    question: str
    answer_type: AnswerType
    answer: Any
    choices: list[str]
    correct_choice: str
    facts: list[dict]
    margin: dict
    provenance: dict
    answerable: bool = True
    information: dict = field(default_factory=lambda: {"attributes": [], "withheld": []})


@dataclass
class EditItem:
    scene: Scene
    instruction: str
    constraints: list[dict]
    allowed_operations: list[EditOp]
    reference_edit: dict
    facts: list[dict]
    margin: dict
    provenance: dict
    target: str = "F0"
    information: dict = field(default_factory=lambda: {"attributes": [], "withheld": []})


@dataclass(frozen=True)
class Solver:
    """How the relation's question is answered from the scene with GIS tools: a method of the
    built-in tools agent (`scoring.runner.agents.questions.METHODS`) and its argument, e.g.
    `Solver("pair", "min_distance")`. A new relation over existing measures names an existing
    method; only a new kind of question needs a new method there."""

    method: str
    arg: str | None = None


@dataclass(frozen=True, kw_only=True)
class Relation:
    """One relation of the catalogue: what it means, how it is asked, answered and edited."""

    code: str
    name: str
    family: Family
    definition: str
    question_forms: str
    questions: tuple[Wording, ...]  # the exact wording of every question the builder asks
    answer_type: AnswerType
    solver: Solver  # how the tools agent answers it
    distractor_rule: str
    edit_constraints: str
    anchor_kinds: tuple[str, ...]  # pools an instance is anchored on, in order of preference
    needs: tuple[str, ...]  # pools the relation needs at all (for shortfall reports)
    build_qa: Callable[[BuildContext, PoolFeature], QAItem | None]
    build_edit: Callable[[BuildContext, PoolFeature], EditItem | None]
    constructs: bool = False  # its builders fill slots with constructions when ctx.construct
    # None, or the feature class (beyond `needs`) the pools lack, e.g. no layered roads: the
    # shortfall is then stated as an absent class instead of being attempted slot by slot.
    requires: Callable[[FeaturePools], str | None] | None = None

    def check_answer(self, instance: Instance, value: Any) -> bool:
        return check_answer(instance["answer_type"], instance["answer"], value, instance.get("tolerance"))


CATALOGUE: Registry[Relation] = Registry("relation")


def relation(
    code: str,
    name: str,
    family: Family,
    *,
    definition: str,
    question_forms: str,
    questions: tuple[Wording, ...],
    answer_type: AnswerType,
    solver: Solver,
    distractor_rule: str,
    edit_constraints: str,
    anchor_kinds: tuple[str, ...],
    needs: tuple[str, ...] | None = None,
    constructs: bool = False,
    requires: Callable[[FeaturePools], str | None] | None = None,
) -> Callable[[Any], Any]:
    """Register a relation whose module defines `qa(ctx, anchor)` and `edit(ctx, anchor)`."""

    def deco(cls: Any) -> Any:  # a class with static qa and edit builders
        CATALOGUE.add(
            code,
            Relation(
                code=code,
                name=name,
                family=family,
                definition=definition.strip(),
                question_forms=question_forms.strip(),
                questions=questions,
                answer_type=answer_type,
                solver=solver,
                distractor_rule=distractor_rule.strip(),
                edit_constraints=edit_constraints.strip(),
                anchor_kinds=anchor_kinds,
                needs=needs or anchor_kinds,
                build_qa=cls.qa,
                build_edit=cls.edit,
                constructs=constructs,
                requires=requires,
            ),
        )
        return cls

    return deco


# ---------------------------------------------------------------- answer checking


def check_answer(answer_type: str, reference: Any, value: Any, tolerance: float | None = None) -> bool:
    """Is a parsed answer value correct? Numbers within the tolerance, bearings circularly (each
    answer format's checker)."""
    if value is None:
        return False
    if isinstance(reference, str) and reference == REFUSAL:
        return value == REFUSAL
    return ANSWER_FORMATS[AnswerType(answer_type)].check(reference, value, tolerance)


# ---------------------------------------------------------------- builder context and helpers


@dataclass
class BuildContext:
    pools: FeaturePools
    rng: random.Random
    protocol: str = "spatialgap"  # scoring.vocab.Protocol: builders ask a few questions differently
    # A second pass for slots without a natural case: builders may use controlled constructions
    # derived from real features (scoring.relations.constructions), recorded in provenance.
    construct: bool = False

    @property
    def crs(self) -> CityCRS:
        return self.pools.crs


def fid(i: int) -> str:
    return f"F{i}"


# id(geometry) -> (geometry, snapped or None when unusable). A pool feature is placed in many
# scenes; the entry holds the geometry, so its id is not reused while the entry lives.
_SNAPPED: dict[int, tuple[BaseGeometry, BaseGeometry | None]] = {}
_SNAPPED_MAX = 20000


def _scene_geometry(geom: BaseGeometry) -> BaseGeometry | None:
    """geom snapped to the 1 cm grid, or None if snapping made it invalid, empty or of
    another type."""
    hit = _SNAPPED.get(id(geom))
    if hit is not None and hit[0] is geom:
        return hit[1]
    g = snap(geom)
    out = None if g.is_empty or not g.is_valid or g.geom_type != geom.geom_type else g
    if len(_SNAPPED) >= _SNAPPED_MAX:
        _SNAPPED.clear()
    _SNAPPED[id(geom)] = (geom, out)
    return out


def make_scene(ctx: BuildContext, members: list[Member]) -> tuple[Scene, dict] | None:
    """Scene with ids F0.. in the given order, geometries snapped to the 1 cm grid.
    None if snapping made a geometry invalid or empty."""
    feats, prov = [], {}
    for i, m in enumerate(members):
        g = _scene_geometry(m.geom)
        if g is None:
            return None
        feats.append(SceneFeature(fid(i), m.kind, g, dict(m.props)))
        prov[fid(i)] = m.provenance()
    return Scene(ctx.crs, feats), prov


def mcq(rng: random.Random, correct: str, distractors: Sequence[str], n: int = 4) -> tuple[list[str], str]:
    """`n` distinct options (four unless a relation lists why not), exactly one correct, in a
    seeded order."""
    opts = [correct] + [d for d in dict.fromkeys(distractors) if d != correct][: n - 1]
    if len(opts) != n:
        raise ValueError(f"need {n - 1} distinct distractors")
    rng.shuffle(opts)
    return opts, LETTERS[opts.index(correct)]


def shuffle_options(inst: dict, rng: random.Random) -> dict:
    """The instance's options in an order drawn by `rng` alone (an rng of the slot's own, used for
    nothing else), so that the right option's position is uniform whatever the builder's draws.
    Options whose order is their form (bearings clockwise, adjacent intervals, yes / no) keep it:
    their builders draw the answer's rank uniformly (yes and no equally often right)."""
    choices, letter = inst.get("choices"), inst.get("correct_choice")
    if not choices or not isinstance(letter, str) or letter not in LETTERS[: len(choices)]:
        return inst
    # options in their order (bearings clockwise, intervals, yes / no): the answer's rank is uniform
    if inst.get("answer_type") in (AnswerType.BEARING, AnswerType.YES_NO) or all(
        str(c).startswith("from ") for c in choices
    ):
        return inst
    right = choices[LETTERS.index(letter)]
    order = list(choices)
    rng.shuffle(order)
    inst["choices"], inst["correct_choice"] = order, LETTERS[order.index(right)]
    return inst


def fmt_num(v: float, decimals: int = 1) -> str:
    return f"{v:,.{decimals}f}".replace(",", " ") if abs(v) >= 10000 else f"{v:.{decimals}f}"


def numeric_distractors(
    rng: random.Random, value: float, unit: str, decimals: int = 1, min_gap: float = 0.5
) -> list[str]:
    """Three point values on a seeded geometric grid with the answer at a uniform rank
    (scoring.relations.options.point_grid): no ratio or offset marks the answer."""
    from scoring.relations.options import point_options

    return point_options(rng, value, unit, decimals, min_gap)


def fact(scene: Scene, measure: str, *args: str, **params: Any) -> dict:
    return make_fact(scene, measure, list(args), params)


def overlap_amount(a: BaseGeometry, b: BaseGeometry) -> float:
    """Size of the intersection in its own dimension (area, length, or 1 per point)."""
    inter = a.intersection(b)
    if inter.is_empty:
        return 0.0
    if inter.area > 0:
        return inter.area
    if inter.length > 0:
        return inter.length
    return 1.0
