"""Topology family, the question side: the wording of each which-one question, the facts a
predicate records, and the one QA builder every topology relation uses (scoring.relations.topology)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

from scoring import oracle
from scoring.constraints.wording import FEATURE_IDS, Wording
from scoring.extract.pools import PoolFeature
from scoring.geometry.scene import Scene
from scoring.relations.base import BuildContext, Member, QAItem
from scoring.relations.common import classify, distances, neighbours, which_one_qa
from scoring.vocab import MarginClass


def _which_one(phrase: str) -> Wording:
    """The topology question: exactly one of the candidates {ids} has the relation with {a}."""
    return Wording(
        f"Exactly one of the features {{ids}} {phrase}. Which one? Answer with its feature id.",
        ids=FEATURE_IDS,
    )


Q_EQUAL = _which_one("is topologically equal to {a} (the same point set, whatever the vertex order)")
Q_DISJOINT = _which_one("is disjoint from {a} (shares no point with it)")
Q_INTERSECTS = _which_one("intersects {a} (shares at least one point with it)")
Q_TOUCHES = _which_one("touches {a} (their boundaries meet but their interiors do not intersect)")
Q_CROSSES = _which_one(
    "crosses {a} (their interiors meet in points, or the road runs both inside and outside the area)"
)
Q_WITHIN = _which_one("lies within {a}")
Q_OVERLAPS = _which_one("overlaps {a} (the interiors intersect and each has a part outside the other)")
Q_BOUNDARY_COVERED = _which_one("is covered by {a} while touching {a}'s boundary (no part outside {a})")
Q_CONTAINED_PROPERLY = _which_one("lies in the interior of {a} without touching its boundary")


def _predicate_facts(measure: str) -> Callable[[Scene, list[str]], list[dict]]:
    def facts(scene: Scene, ids: list[str]) -> list[dict]:
        out = []
        for i in ids:
            out.append(
                {
                    "measure": measure,
                    "args": [i, "F0"],
                    "params": {},
                    "value": oracle.MEASURES[measure].fn(scene.geom(i), scene.geom("F0")),
                }
            )
            out.append(
                {
                    "measure": "de9im",
                    "args": [i, "F0"],
                    "params": {},
                    "value": oracle.de9im(scene.geom(i), scene.geom("F0")),
                }
            )
        return out

    return facts


def _classified(
    ctx: BuildContext, anchor: PoolFeature, kinds: Iterable[str], radius: float, extra: Sequence[Member] = ()
) -> list[tuple[Member, MarginClass]]:
    a = anchor.geom
    pool = [Member.of(f) for f in neighbours(ctx, anchor, kinds, radius)] + list(extra)
    gaps = distances([m.geom for m in pool], a)
    return [(m, classify(m.geom, a, d)) for m, d in zip(pool, gaps, strict=True)]


def _qa(
    ctx: BuildContext,
    anchor: PoolFeature,
    kinds: Iterable[str],
    radius: float,
    positive: Collection[MarginClass],
    negative: Collection[MarginClass],
    question: Wording,
    measure: str,
    extra: Sequence[Member] = (),
) -> QAItem | None:
    cls = _classified(ctx, anchor, kinds, radius, extra)
    pos = [m for m, c in cls if c in positive]
    neg = [m for m, c in cls if c in negative]
    # Prefer near misses: negatives that intersect or lie close to F0.
    neg.sort(key=lambda m: m.geom.distance(anchor.geom))
    neg = neg[:8]
    return which_one_qa(
        ctx,
        Member.of(anchor),
        pos,
        neg,
        question,
        _predicate_facts(measure),
        margin={
            "clear_gap_m": 1.0,
            "clear_overlap": 2.0,
            "classes": sorted({c for _, c in cls if c is not MarginClass.AMBIGUOUS}),
        },
    )
