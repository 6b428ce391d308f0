"""The paper protocol's topology label question: which label names the relation of one pair.

Labels are the ones the paper's topological families use, each an exact GEOS predicate of (x, y):
equals, within, contains, covered by, covers, touches, crosses, overlaps, intersects, disjoint.
Several can hold at once (within implies covered by and intersects), so the question asks for the
MOST SPECIFIC label that holds, decided by the fixed order of LABELS: the first label in that
order that holds is the answer. The options never include another label that holds, so exactly
one option is true under either reading ("a label that holds", "the most specific one").

The pair asked about is the relation's own (the candidate that has the relation with F0, so T02
asks for `disjoint`, T06 for `within` or `contains`), else one that is not disjoint. Distractors
are three labels that do not hold, drawn in proportion to how often each label is an answer
(LABEL_WEIGHTS): an earlier rule (the labels that nearly hold) offered `disjoint` in every item
and never as the answer, and let the label order name the answer, so options alone solved it.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from shapely.geometry import shape
from shapely.geometry.base import BaseGeometry

from scoring import oracle
from scoring.constraints.wording import FEATURE_ID, Wording
from scoring.relations.base import mcq
from scoring.relations.common import classify
from scoring.vocab import TOPOLOGY_CLASSES, AnswerType, MarginClass, TopologyClass

# Most specific first: a label implies none before it (the answer format's own list).
LABELS = TOPOLOGY_CLASSES
Q_TOPOLOGY_CLASS = Wording(
    "What is the topological relation of {b} to {a}? Name the most specific of these labels that "
    "holds: equals, within, contains, covered by, covers, touches, crosses, overlaps, intersects, "
    "disjoint.",
    a=FEATURE_ID,
    b=FEATURE_ID,
)
_INVERSE = {
    TopologyClass.WITHIN: TopologyClass.CONTAINS,
    TopologyClass.CONTAINS: TopologyClass.WITHIN,
}
Predicate = Callable[[str, BaseGeometry, BaseGeometry], bool]


def _exact(measure: str, x: BaseGeometry, y: BaseGeometry) -> bool:
    return bool(oracle.MEASURES[measure].fn(x, y))


def label_holds(label: TopologyClass, x: BaseGeometry, y: BaseGeometry, topo: Predicate = _exact) -> bool:
    """Does `label` hold for x with respect to y (exact GEOS unless another predicate is given)?"""
    measure, swapped = label.measure
    return topo(measure, y, x) if swapped else topo(measure, x, y)


def most_specific_label(x: BaseGeometry, y: BaseGeometry, topo: Predicate = _exact) -> TopologyClass:
    """The first label of LABELS that holds for x with respect to y."""
    return next((lab for lab in LABELS if label_holds(lab, x, y, topo)), TopologyClass.DISJOINT)


# How often each label is the answer when every topology relation asks for its own pair's label:
# T06, T09 and T11 all give within / contains (GEOS `within` holds for a polygon touching the
# other's boundary from inside, so `covered by` / `covers` are never the most specific label of a
# clear pair), T03 a mix of within, contains and crosses; `intersects` is never the most specific
# label. Distractors are drawn in these proportions, so that a label offered is right about as
# often as any other, and labels never right are never offered.
LABEL_WEIGHTS: dict[TopologyClass, float] = {
    TopologyClass.EQUALS: 1.0,
    TopologyClass.WITHIN: 2.6,
    TopologyClass.CONTAINS: 2.6,
    TopologyClass.COVERED_BY: 0.0,
    TopologyClass.COVERS: 0.0,
    TopologyClass.TOUCHES: 1.0,
    TopologyClass.CROSSES: 1.2,
    TopologyClass.OVERLAPS: 1.0,
    TopologyClass.INTERSECTS: 0.0,
    TopologyClass.DISJOINT: 1.0,
}


def _weighted_sample(rng: random.Random, labels: list[TopologyClass], n: int) -> list[TopologyClass]:
    """n distinct labels drawn without replacement in LABEL_WEIGHTS' proportions."""
    pool, out = list(labels), list[TopologyClass]()
    while pool and len(out) < n:
        pick = rng.choices(pool, weights=[LABEL_WEIGHTS[lab] for lab in pool])[0]
        out.append(pick)
        pool.remove(pick)
    return out


def as_label_question(inst: dict, rng: random.Random) -> bool:
    """Ask a topology QA instance as a label question about one pair with a clear label."""
    feats = {f["id"]: shape(f["geometry"]) for f in inst["scene"]["features"]}
    if "F0" not in feats:
        return False
    cands = sorted((i for i in feats if i != "F0"), key=lambda s: int(s[1:]))
    rng.shuffle(cands)
    classes = {c: classify(feats[c], feats["F0"]) for c in cands}
    cands.sort(key=lambda c: classes[c] is MarginClass.DISJOINT)  # stable: the shuffled order otherwise
    own = inst.get("answer")
    if own in classes:  # the relation's own pair first: T02 asks for "disjoint", T06 for "within"
        cands.remove(own)
        cands.insert(0, own)
    for c in cands:
        label = classes[c].label
        if label is None:  # a 1 m change could alter the pair's class
            continue
        x, y = (c, "F0") if rng.random() < 0.5 else ("F0", c)
        if x == "F0":
            label = _INVERSE.get(label, label)
        if most_specific_label(feats[x], feats[y]) != label:
            continue
        wrong = [lab for lab in LABELS if LABEL_WEIGHTS[lab] > 0 and not label_holds(lab, feats[x], feats[y])]
        if len(wrong) < 3:
            continue
        distractors = _weighted_sample(rng, wrong, 3)
        choices, letter = mcq(rng, label, distractors)
        inst.update(
            question=Q_TOPOLOGY_CLASS.render(a=y, b=x),
            answer_type=AnswerType.TOPOLOGY_CLASS,
            answer=label,
            unit=None,
            tolerance=None,
            choices=choices,
            correct_choice=letter,
        )
        inst["facts"] = inst["facts"] + [
            {"measure": "de9im", "args": [x, y], "params": {}, "value": oracle.de9im(feats[x], feats[y])}
        ]
        return True
    return False
