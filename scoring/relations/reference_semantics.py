"""The parts of the relation reference that only the code used to say (issue #12): how edits
are applied and measured, tolerances, tie rules and attribute readings. Kept beside the code
whose constants it quotes, so `make reference` regenerates it with them."""

from __future__ import annotations

from scoring.extract.pools import SPLIT_TILE_M
from scoring.oracle import EDIT_EPS
from scoring.relations.common import EDIT_NUDGE_M, NUDGE_SLACK_M


# long: the reference's semantics text, paragraph after paragraph as the document reads
def semantics_section() -> str:
    items = [
        '**Edit origin.** `"origin": "centroid"` in a rotate or scale operation is the '
        "target's centroid at that operation, i.e. after the operations before it, not its "
        "initial centroid.",
        "**Facts after an edit.** The edited geometry is put on the scene's 1 cm grid before "
        "any fact or constraint is computed on it. Rounding: each coordinate x (a binary double) "
        "becomes rint(x × 100) / 100 in double arithmetic, numpy's scaled round half to even: "
        "the product x × 100 is itself rounded to a double first, then to the nearest integer "
        "(ties to even), then divided by 100; the result is kept in place, so vertex order is "
        "unchanged. This is not decimal rounding of the coordinate: 2.675 (stored as "
        "2.67499999999999982...) gives 267.5, hence 2.68, where decimal rounding of the stored "
        "value (Python's round(2.675, 2)) gives 2.67; 0.125 gives 12.5, hence 0.12 (ties to "
        "even; half-up would give 0.13). "
        "Fallback: when the rounded geometry is empty, or invalid "
        "(not a point), the original is snapped by GEOS's precision reducer instead "
        "(shapely.set_precision(g, 0.01), GEOS GeometryPrecisionReducer keeping validity, which "
        "may drop collapsed vertices or parts), and its coordinates are then rounded with "
        "Python's round(x, 2); if that is empty too, the edit is rejected. The scenes themselves "
        "were put on the same grid by the same reducer when built. The builder's reference "
        "edits, the scorer and the explanations all apply this one rule.",
        "**How constraints are compared.** A constraint's value is computed in double precision on "
        "the snapped geometries, then rounded to 6 decimals (Python's round, half to even on the "
        "binary value); bounds are inclusive on that rounded value: `between` is min <= v <= max, "
        "`at_most` v <= max, `at_least` v >= min, `angle_within` angle_diff(v, target) <= "
        "tolerance with angle_diff(a, b) = min(|a - b| mod 360, 360 - |a - b| mod 360); `is` "
        "compares numbers within a relative 1e-6 (absolute 1e-5), angles within 1e-5°, "
        "anything else exactly. Bounds are written with at most 3 decimals.",
        f"**Reference edits hold with a margin.** Every reference edit still satisfies all of "
        f"its instance's constraints when its result is moved by ±{EDIT_NUDGE_M:g} m along "
        f"either grid axis and rounded again; each editing instance states this as "
        f"`margin.reference_edit_nudge_m`. The builder checks a nudge {NUDGE_SLACK_M:g} m larger "
        f"as well, so the promised nudge never lands exactly on a bound (strictly positive slack).",
        f"**One tolerance per instance.** An exact predicate is a DE-9IM predicate decided "
        f"exactly by GEOS on the snapped coordinates (equals, touches, crosses, within, "
        f"boundary coverage, proper containment, ...). Where an editing instance judges one of "
        f"them within eps (its `*_eps` form, or `endpoint_connected`), it judges every predicate "
        f"that has such a form with the same eps ({EDIT_EPS:g} m): O08 asks for "
        f"`endpoint_connected` and `crosses_eps` = false, so an end that overshoots the other road "
        f"by at most eps is a connection, not a crossing. Predicates without an eps form "
        f"(`disjoint`, `intersects`, `within`, `overlaps`, `covered_by`) and instances with no eps "
        f"predicate at all (T05 asks `crosses`) are judged exactly.",
        "**`touches_eps` on lines.** Distance <= eps, and the interiors, pulled back by eps, are "
        "disjoint: a polygon is buffered inwards by eps, a line is shortened by eps at both ends "
        "(a line at most 2 eps long is replaced by its midpoint; two lines that meet only at their "
        "ends touch), a point stays as it is. A negative buffer is never applied to a line (it "
        "would be empty): the PostGIS column of `touches_eps` says how.",
        "**`equals_eps`** requires the same geometry type (GEOS's type name): a polygon is never "
        "equal to a line, and a Polygon never equal to a MultiPolygon, even one of a single part, "
        "however close.",
        "**`crosses_eps` beyond lines.** The endpoints are those of the arguments that are "
        "LineStrings. Each part of the intersection counts: a point, or a line piece (a line "
        "crossing a polygon meets it in pieces); the crossing holds when OGC crosses holds and "
        "some part lies farther than eps from every such endpoint. With no LineString argument "
        "(nothing has ends), OGC crosses alone decides.",
        "**`along_next` with nothing in that direction.** The measure has no value (it raises) "
        "when no other feature lies strictly after (or before) the reference along the line; no "
        "question is built on such a case (O02 picks its reference so that a neighbour exists "
        "in the asked direction), and the built-in agents answer 'cannot be determined' there.",
        "**`side_of_line` labels and ties.** `left` / `right` is the sign of the cross product of "
        "the line's segment nearest the point (looking from its first vertex to its last) with "
        "the point; when two segments are equally near, the first in vertex order decides; a "
        "point exactly on that segment is `on`, and `same_side` is false for it.",
        "**Bridges, tunnels and layers.** `vertical_level` is null when none of `layer`, `bridge`, "
        "`tunnel` is present (withheld). Otherwise, when `layer` is present and not null, it is "
        "`layer` read as an integer: an integer as it is (a boolean is not one), an integral "
        "number such as 1.0 as its integer, a string stripped and cut at its first `;` (OSM lists: "
        "`1;2` gives 1, ` -1 ` gives -1) then read as a signed decimal integer (`1.0` as a string, "
        "`1.5`, a list: unreadable, and the level is null). Else +1 when `bridge` is set, not null, "
        "and, as a string stripped and lower-cased, not `no`, `false`, `0` or empty (yes, Yes, "
        "viaduct, aqueduct, ...); else -1 when `tunnel` is such a value (yes, culvert, "
        "building_passage, ...); else 0. A null tag counts as absent. Extraction reads OSM's "
        "`layer` tag the same way and stores an integer. A road whose level cannot be read is "
        "never asked about; `level_above` is false when either level is null.",
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
