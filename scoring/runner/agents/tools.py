"""The `tools` agent, standing for a tool-using model: it reads the scene GeoJSON and the question
or instruction text, recognises each relation's question by the pattern derived from its wording
in the catalogue (scoring/relations/), and answers by GIS operations (the measures of
scoring.oracle are its "tools"). Edits: the numbered constraint lines are parsed back into
constraint dicts (the inverse of scoring.constraints.facts.describe_constraint) and an allowed edit of the
target satisfying all of them is searched for, checked with the executor and checker the scorer
uses. In the image modality there are no coordinates, so it cannot use its tools: it answers
"cannot be determined" (QA) and sends the smallest valid non-zero edit (translate 1 px; set
layer = 1 where only attribute edits are allowed). Deterministic."""

from __future__ import annotations

from scoring.runner.agents.edit_search import answer_edit_tools
from scoring.runner.agents.prompt_view import is_edit_request, parse_prompt
from scoring.runner.agents.questions import answer_qa
from scoring.runner.agents.registry import agent
from scoring.runner.agents.toolkits import TOOLS
from scoring.vocab import Task


@agent("tools", reads_images=False, offload=is_edit_request)  # QA answers take a fraction of a ms
def tools(messages: list[dict]) -> str:
    """A tool-using model: GIS operations over the scene in the prompt."""
    v = parse_prompt(messages)
    if v.task == Task.EDIT:
        return answer_edit_tools(v)
    return answer_qa(v, TOOLS)
