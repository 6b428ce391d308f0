"""The parts of the relation reference that only the code used to say (issue #12): how edits
are applied and measured, tolerances, tie rules and attribute readings. Kept beside the code
whose constants it quotes, so `make reference` regenerates it with them."""

from __future__ import annotations

from scoring.extract.pools import SPLIT_TILE_M
from scoring.oracle import EDIT_EPS
from scoring.relations.common import EDIT_NUDGE_M


def semantics_section() -> str:
    items = [
        '**Edit origin.** `"origin": "centroid"` in a rotate or scale operation is the '
        "target's centroid at that operation, i.e. after the operations before it, not its "
        "initial centroid.",
        "**Facts after an edit.** The edited geometry is put on the scene's 1 cm grid before "
        "any fact or constraint is computed on it: its coordinates are rounded to 2 decimals in "
        "place (what its GeoJSON would carry; GEOS's grid snapping only where rounding would "
        "make it invalid). The builder's reference edits, the scorer and the explanations all "
        "apply this one rule.",
        f"**Reference edits hold with a margin.** Every reference edit still satisfies all of "
        f"its instance's constraints when its result is moved by ±{EDIT_NUDGE_M:g} m along "
        f"either grid axis and rounded again; each editing instance states this as "
        f"`margin.reference_edit_nudge_m`.",
        f"**One tolerance per instance.** An editing instance that judges an exact predicate "
        f"within eps judges all of its exact predicates with that same eps ({EDIT_EPS:g} m): O08 "
        f"asks for `endpoint_connected` and `crosses_eps` = false, so an end that overshoots the "
        f"other road by at most eps is a connection, not a crossing.",
        "**`touches_eps` on lines.** Distance <= eps, and the interiors, pulled back by eps, are "
        "disjoint: a polygon is buffered inwards by eps, a line is shortened by eps at both ends "
        "(two lines that meet only at their ends touch), a point stays as it is.",
        "**`equals_eps`** requires the same geometry type: a polygon is never equal to a line, "
        "however close.",
        "**`side_of_line` labels and ties.** `left` / `right` is the sign of the cross product of "
        "the line's segment nearest the point (looking from its first vertex to its last) with "
        "the point; when two segments are equally near, the first in vertex order decides; a "
        "point exactly on that segment is `on`, and `same_side` is false for it.",
        "**Bridges, tunnels and layers.** `vertical_level` is `layer` when it is an integer "
        "(OSM lists such as `1;2` give their first integer; any other non-integer `layer` counts "
        "as unset); otherwise +1 when `bridge` has any value other than `no`, `false`, `0` or "
        "empty (yes, viaduct, aqueduct, ...), -1 when `tunnel` has such a value (yes, culvert, "
        "building_passage, ...), else 0. A road whose level cannot be read is never asked about.",
        "**Bearing between coincident points.** The bearing from a point to itself is 0° "
        "(atan2(0, 0)); no instance asks for one (builders keep reference points apart).",
        "**Ties.** `nearest`: equal distances go to the candidate given first; `along_order`: "
        "equal positions keep the order the features are given in; `along_next`: the first given "
        "among equal positions. Builders reject candidates near such ties (their margins are "
        "recorded per instance), so a tie rule never decides an answer.",
        '**O02\'s "immediately after / before"** is recorded as the fact `along_next` with '
        "`params.direction` = `after` or `before`: the answer is its value.",
        "**Numeric bands** in editing constraints always have min < max and, for densities, "
        'exclude 0 (no "density between 0 and 0 per km²").',
        f"**Separate pools.** QA and editing instances are drawn from disjoint halves of the "
        f"city's features: {SPLIT_TILE_M:g} m tiles of the task CRS, dealt by a hash of their "
        f"indices to balance every feature class (recorded in the manifest's `pool_split`). "
        f"Where a half has too few natural cases, controlled constructions move real features "
        f"(never reshape them) and say so in `provenance` (`origin: constructed`).",
    ]
    return "\n## Semantics the measures rely on\n\n" + "\n".join(f"- {i}" for i in items) + "\n"
