"""Topology classes: the DE-9IM class a reply names (the paper protocol's category question)."""

from __future__ import annotations

import re
from typing import Any

from scoring.answers.base import Parsed, fail
from scoring.answers.evidence import Question, read_reply
from scoring.answers.text import Prepared
from scoring.vocab import TOPOLOGY_CLASSES, TopologyClass

# The labels a topology-class answer names, most specific first (scoring.relations.paper_topology
# decides "most specific" in this order; chance guesses from it).
TOPOLOGY_CLASS_NAMES = TOPOLOGY_CLASSES
# Each class with the word forms a reply may use; negated mentions ("not disjoint") are not answers.
_FORMS = {
    TopologyClass.EQUALS: r"equals?|(?:topologically\s+)?equal|identical",
    TopologyClass.COVERED_BY: r"covered[\s_]*by|coveredby",
    TopologyClass.COVERS: r"covers",
    TopologyClass.INTERSECTS: r"intersects?|intersecting",
    TopologyClass.DISJOINT: r"disjoint",
    TopologyClass.TOUCHES: r"touch(?:es|ing)?|meets?",
    TopologyClass.WITHIN: r"(?:is\s+)?within|inside",
    TopologyClass.CONTAINS: r"contains?|containing",
    TopologyClass.CROSSES: r"cross(?:es|ing)?",
    TopologyClass.OVERLAPS: r"overlap(?:s|ping)?",
}
_CLASS_RX = {
    name: re.compile(rf"(?<![\w\-])(?<!not )(?<!n't )(?:{rx})(?![\w\-])", re.I) for name, rx in _FORMS.items()
}


def _class_in(seg: str, pre: Prepared) -> Parsed:
    found = [name for name, rx in _CLASS_RX.items() if rx.search(seg)]
    if not found:
        return fail("no DE-9IM class found")
    if len(found) > 1:
        return fail("several different DE-9IM classes")
    return Parsed(True, found[0])


def parse_topology_class(text: Any, question: str = "") -> Parsed:
    """One topology label (equals, within, contains, covered by, covers, touches, crosses,
    overlaps, intersects, disjoint); two different labels named -> not ok. A negated label
    ("not disjoint") is no answer."""
    return read_reply(text, _class_in, Question(question))
