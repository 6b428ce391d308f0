"""Reference agents that answer from the prompt alone (never from the benchmark files):

``tools``     stands for a tool-using model: it reads the scene GeoJSON and the question or
              instruction text, recognises each relation's wording (one small parser per question
              shape, derived from the builders in scoring/relations/), and answers by GIS
              operations (the measures of scoring.oracle are its "tools"). Edits: the numbered
              constraint lines are parsed back into constraint dicts (the inverse of
              scoring.facts.describe_constraint) and an allowed edit of the target satisfying all
              of them is searched for, checked with the same executor and checker the scorer uses.
              In the image modality there are no coordinates, so it cannot use its tools: it
              answers "cannot be determined" (QA) and sends the smallest valid non-zero edit
              (translate 1 px; set layer = 1 where only attribute edits are allowed).
``centroid``  a careless analyst reasoning only from bounding boxes and centroids (topology by
              bbox intersection / containment, distances and directions between bbox centres,
              orders by projection onto a line's chord, areas and perimeters of bboxes), editing
              by moving the target's centroid to where the constraints seem to ask.

Both are deterministic and registered with scoring.runner.agents (`spatialgap serve-agent
--agent tools`); the machinery lives in scoring/runner/reference/.
"""

from __future__ import annotations

from scoring.runner.agents import agent, parse_prompt
from scoring.runner.reference.questions import answer_qa
from scoring.runner.reference.search import answer_edit_careless, answer_edit_tools
from scoring.runner.reference.toolkits import CARELESS, TOOLS


@agent("tools")
def tools(messages: list[dict]) -> str:
    """A tool-using model: GIS operations over the scene in the prompt."""
    v = parse_prompt(messages)
    if v.task == "edit":
        return answer_edit_tools(v)
    return answer_qa(v, TOOLS)


@agent("centroid")
def centroid(messages: list[dict]) -> str:
    """A careless analyst: bounding boxes and centroids only."""
    v = parse_prompt(messages)
    if v.task == "edit":
        return answer_edit_careless(v)
    return answer_qa(v, CARELESS)
