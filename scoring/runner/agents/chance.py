"""The `chance` agent: answers at random within the answer format (about 25 % on multiple choice), and
refuses REFUSAL_RATE of the requests whose prompt invites a refusal (10 %, drawn apart from the
answers), answerable or not. Only the QA prompts of `--protocol spatialgap` invite one: under
`paper` and on edits (whose prompts ask for the JSON edit only) chance never refuses, so its
replies there are those it gave before refusals were measured."""

from __future__ import annotations

import json

from scoring.answers.formats import format_of_category
from scoring.runner.agents.prompt_view import parse_prompt, request_rng
from scoring.runner.agents.registry import agent
from scoring.vocab import REFUSAL

REFUSAL_RATE = 0.1  # refuses this share of requests, whatever they ask (an rng of its own)


@agent("chance")
def chance(messages: list[dict]) -> str:
    """Answers at random within the answer format (deterministic per request)."""
    v = parse_prompt(messages)
    rng = request_rng(messages)
    invited = REFUSAL in v.text or REFUSAL in v.system  # the prompt's own refusal wording
    if invited and request_rng(messages, "refusal").random() < REFUSAL_RATE:
        return "Answer: cannot be determined"
    if v.task == "edit" and v.units == "pixel_geometry":
        x, y = rng.uniform(200, 1336), rng.uniform(200, 1336)
        h = rng.uniform(4, 40)
        ring = [[x - h, y - h], [x + h, y - h], [x + h, y + h], [x - h, y + h], [x - h, y - h]]
        coords = [[[round(a, 1) for a in p] for p in ring]]
        return json.dumps({"pixel_geometry": {"type": "Polygon", "coordinates": coords}})
    if v.task == "edit":
        scale = 20.0 if v.units == "pixels" else 25.0
        dx = dy = 0.0
        while dx == 0 and dy == 0:
            dx, dy = round(rng.uniform(-scale, scale), 1), round(rng.uniform(-scale, scale), 1)
        return json.dumps({"operations": [{"op": "translate", "dx": dx, "dy": dy}]})
    ids = v.feature_ids or [f"F{i}" for i in range(5)]
    return f"Answer: {format_of_category(v.answer_category).guess(rng, ids, v.choices)}"
