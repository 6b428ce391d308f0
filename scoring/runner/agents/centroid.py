"""The `centroid` agent, a careless analyst reasoning only from bounding boxes and centroids
(topology by bbox intersection / containment, distances and directions between bbox centres,
orders by projection onto a line's chord, areas and perimeters of bboxes), editing by moving the
target's centroid to where the constraints seem to ask. Deterministic."""

from __future__ import annotations

from scoring.runner.agents.careless_edits import answer_edit_careless
from scoring.runner.agents.prompt_view import parse_prompt
from scoring.runner.agents.questions import answer_qa
from scoring.runner.agents.registry import agent
from scoring.runner.agents.toolkits import CARELESS
from scoring.vocab import Task


@agent("centroid", reads_images=False)
def centroid(messages: list[dict]) -> str:
    """A careless analyst: bounding boxes and centroids only."""
    v = parse_prompt(messages)
    if v.task == Task.EDIT:
        return answer_edit_careless(v)
    return answer_qa(v, CARELESS)
