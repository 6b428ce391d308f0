"""The `chance` agent: answers at random within the answer format (about 25 % on multiple choice), and
refuses REFUSAL_RATE of the requests (10 %, drawn apart from the answers), answerable or not."""

from __future__ import annotations

import json

from scoring.runner.agents.prompt_view import parse_prompt, request_rng
from scoring.runner.agents.registry import agent

# the paper protocol's topology classes (scoring.relations.paper), spelled here so chance loads no catalogue
REFUSAL_RATE = 0.1  # refuses this share of requests, whatever they ask (an rng of its own)
TOPOLOGY_CLASS_NAMES = ("disjoint", "touches", "crosses", "overlaps", "within", "contains", "equals")


@agent("chance")
def chance(messages: list[dict]) -> str:
    """Answers at random within the answer format (deterministic per request)."""
    v = parse_prompt(messages)
    rng = request_rng(messages)
    if request_rng(messages, "refusal").random() < REFUSAL_RATE:
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
    cat = v.answer_category
    if cat == "choice":
        ans = rng.choice("ABCD"[: max(1, min(4, len(v.choices) or 4))])
    elif cat == "metres":
        ans = f"{rng.uniform(1, 1000):.1f}"
    elif cat == "square_metres":
        ans = f"{rng.uniform(10, 50000):.0f}"
    elif cat == "degrees":
        ans = str(rng.randrange(0, 360))
    elif cat == "count":
        ans = str(rng.randrange(0, 10))
    elif cat == "boolean":
        ans = rng.choice(["yes", "no"])
    elif cat == "feature_id":
        ans = rng.choice(ids)
    elif cat == "direction":
        ans = rng.choice(["N", "NE", "E", "SE", "S", "SW", "W", "NW"])
    elif cat == "direction4":
        ans = rng.choice(["N", "E", "S", "W"])
    elif cat == "relative_direction":
        ans = rng.choice(["ahead", "behind", "left", "right"])
    elif cat == "axis":
        ans = rng.choice(["N-S", "NE-SW", "E-W", "NW-SE"])
    elif cat == "ordering":
        order = [i for i in ids if i != "F0"]
        rng.shuffle(order)
        ans = ", ".join(order)
    elif cat == "topology_class":
        ans = rng.choice(TOPOLOGY_CLASS_NAMES)
    elif cat == "density":
        ans = f"{rng.uniform(0, 5000):.3f}"
    else:
        ans = rng.choice(["yes", "no", "cannot be determined", *ids])
    return f"Answer: {ans}"
