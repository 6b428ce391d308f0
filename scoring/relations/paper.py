"""The paper protocol (GeoSpatialBench, "Mind the Spatial Gap"): how an instance built by the
catalogue is put under `--protocol paper`. Our own protocol (`spatialgap`) stays the default; every
place where either protocol departs from the paper is listed in DEVIATIONS (and in the relation
reference's "Deviations from the paper"), and every protocol switch in the code names its entry
(`# protocol switch: <id>`; tests/build/test_protocol.py checks both ways).

Under `paper`, after a relation's builder made an instance:
- O06 (layer hierarchy) QA: the `layer` / `bridge` / `tunnel` attributes leave the GeoJSON and go
  to `map_properties` (drawn on the map's attribute cards only). Every modality is scored against
  the true answer (a model without the attributes guesses); `information_sufficient` records that
  the GeoJSON alone lacks them, so the information-sufficient score drops O06 there.
- distances, perimeters and densities: four adjacent intervals, the answer inside one of them at
  least a quarter of a width from its ends (numerical relations: adjacent intervals).
- bearings (D04): four nearby bearings, BEARING_STEP apart, the answer at a random rank
  (directional relations: nearby bearings).
- M14 (within distance): the paper's yes/no question about one candidate ("within 63 m? yes").
- topology QA of every LABEL_EVERY-th slot (1, 5, 9, ...): asked as a label question about the
  relation's own pair
  (scoring.relations.paper_topology); other slots keep the "which feature" form.
- editing on the map image: the reply is the edited pixel geometry plus the attributes the
  instruction needs (`edit_reply`), mapped back through the map's sidecar.
- prompts: no invitation to answer "cannot be determined" (resources/prompts/_common.j2).
Every transformation is a pure function of the instance and a seeded rng.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from scoring.constraints.wording import FEATURE_ID, NUMBER, Wording, one_of
from scoring.relations.base import LETTERS, TOLERANCES
from scoring.relations.paper_topology import (
    LABELS,
    Q_TOPOLOGY_CLASS,
    as_label_question,
    most_specific_label,
)
from scoring.vocab import MODALITIES, AnswerType, Family, Protocol, Task

__all__ = ["DEVIATIONS", "LABELS", "Q_TOPOLOGY_CLASS", "TOPOLOGY_CLASSES", "apply_protocol"]

LAYER_ATTRS = ("layer", "bridge", "tunnel")
TOPOLOGY_CLASSES = LABELS  # the label set of the paper's topology questions, most specific first
exact_topology_class = most_specific_label
INTERVAL = Wording("from {lo} to {hi}{unit}", lo=NUMBER, hi=NUMBER, unit=one_of("", " m", "°", " per km²"))
PIXEL_EDIT_REPLY = "pixel_geometry"  # `edit_reply` of image edits under the paper protocol
# Topology label questions on every fourth slot: a relation's label items all have its own label, so
# an options-only solver that ranks labels beats guessing on them (T06, T09, T11: within /
# contains); a quarter of the relation's items keeps that within the gate's margin.
LABEL_EVERY = 4
BEARING_STEP = 15.0  # degrees between the nearby-bearing options (15 tolerances of 1°)
Q_LAYER_PAPER = Wording(
    "Roads {a} and {b} cross in plan view. Which of them lies above the other? Use the roads' "
    "attributes: the vertical level is `layer` if set, otherwise +1 for a bridge, -1 for a "
    "tunnel, else 0."
)
Q_WITHIN_DISTANCE_YES_NO = Wording(
    "Is {b} within {d:g} m of {a} (minimum distance at most {d:g} m)? Answer yes or no.",
    a=FEATURE_ID,
    b=FEATURE_ID,
    d=NUMBER,
)
YES_NO_CHOICES = ("yes", "no")
ROAD_CHOICES = (["F0", "F1"], ["F1", "F0"])  # O06 under paper: the two roads, in either order

_INTERVAL_TYPES = {
    # answer type: (unit text, decimals)
    AnswerType.DISTANCE: (" m", 1),
    AnswerType.PERIMETER: (" m", 1),
    AnswerType.DENSITY: (" per km²", 3),
}


@dataclass(frozen=True)
class Deviation:
    """One place where a protocol's outputs depart from the paper, or where the paper is silent and
    we had to choose. `protocols` are those whose outputs it applies to."""

    id: str
    title: str
    ours: str
    paper: str
    reason: str
    protocols: tuple[str, ...]


_BOTH = (str(Protocol.SPATIALGAP), str(Protocol.PAPER))
_OURS = (str(Protocol.SPATIALGAP),)
_PAPER = (str(Protocol.PAPER),)

DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "o06-attributes",
        "O06 attributes",
        "A quarter of O06 questions withhold `layer` / `bridge` / `tunnel` from every modality; the "
        "answer is then 'cannot be determined' everywhere (a refusal scores correct, an answer is "
        "`unfounded_answer`).",
        "The attributes are on the map's attribute cards only; the GeoJSON score is taken against "
        "the true answer and the information-sufficient score drops O06 in the geometry-only "
        "condition.",
        "Refusal is tested the same way in every modality, so the conditions stay comparable item "
        "by item.",
        _OURS,
    ),
    Deviation(
        "numeric-options",
        "Numeric options",
        "Options of distances, perimeters, areas and densities are point values drawn so that the four "
        "are exchangeable (a window of fixed log-width placed uniformly over the answer, the "
        "distractors uniform in log inside it, every two at least 10 % apart). Under `paper`: four "
        "adjacent intervals of equal width, the first starting t widths from zero with t uniform in "
        "3-8 independently of which interval holds the answer, the answer a quarter to three "
        "quarters of a width (and two tolerances) inside; bounds to the width's second significant "
        "digit; an answer below 96 tolerances (too small for such intervals: its size would tell "
        "its interval) keeps the point options.",
        "Four adjacent intervals (no width or start rule given).",
        "A point value is read back and checked with the same tolerance as the open answer; under "
        "`paper`, a width and start that depended on the value (width nice(v/4), start clamped at "
        "0) told which interval held it.",
        _BOTH,
    ),
    Deviation(
        "bearing-options",
        "Bearing options",
        "D04 options are four bearings equally spaced by a seeded step (15°, 20°, 30° or 45°), in "
        "clockwise order, the answer at a uniform rank.",
        f"Nearby bearings (under `paper`: four bearings {BEARING_STEP:g}° apart, answer at a random "
        "rank; the spacing is ours, the paper gives none).",
        "Fixed offsets (±20°, ±45°, 90°, 180°) made the answer the bearing the others were placed "
        "around (98 % from the options alone); equal spacing leaves every option alike.",
        _BOTH,
    ),
    Deviation(
        "topology-questions",
        "Topology questions",
        "Every topology question asks which one of F1–F4 has the relation with F0.",
        "Topology is also asked as a label question with plausible competing labels (under "
        "`paper`: every fourth slot (1, 5, 9, ...) asks for the label of the relation's own pair, "
        "e.g. T02 `disjoint`, T06 "
        "`within`; ten labels; the most specific label that holds, by a fixed order; distractors "
        "three labels that do not hold, drawn in proportion to how often each label is an answer, "
        "so that no label is marked by being offered). The order and the drawing rule are ours.",
        "One relation per question keeps the 28 relations separately measurable.",
        _BOTH,
    ),
    Deviation(
        "m14-count",
        "M14 as a count",
        "M14 asks how many of F1–F6 lie within d of F0 (options: adjacent counts).",
        'A yes/no question about one feature ("within 63 m? yes").',
        "A count over six features tests the same predicate six times per item.",
        _OURS,
    ),
    Deviation(
        "map-image-edits",
        "Map-image edits",
        "On the map image an edit is a list of operations in pixels (translate, rotate, scale, set "
        "attribute).",
        "The edited pixel geometry plus attributes.",
        "Operations keep the target's shape exactly, so a correct intent is never lost to redrawn "
        "vertices.",
        _OURS,
    ),
    Deviation(
        "refusal-invitation",
        "Refusal invitation",
        "Every open-ended prompt adds: if the information given is insufficient to answer, answer "
        "'cannot be determined'; the choice instruction offers the refusal option.",
        "Prompts say only what the items need.",
        "Refusal is part of what we measure (O06 withheld attributes).",
        _OURS,
    ),
    Deviation(
        "unanswerable-variants",
        "Unanswerable variants",
        "Besides O06, about one in ten items per relation and task (`--unanswerable-share`, default "
        "0.1) is an unanswerable variant of an answerable one: a named feature missing, coincident "
        "points, an angle on a sector edge, edit constraints no edit can meet. They come in addition "
        "to the 25 + 25 answerable items; a refusal is right, an answer `unfounded_answer`.",
        "Only O06 tests refusal (attributes on the map only, so the GeoJSON lacks them).",
        "Refusal is measured in every family, from the same scenes and oracle (resources/relations.md, "
        "“Unanswerable items”).",
        _OURS,
    ),
    Deviation(
        "t09-reading",
        "T09 reading",
        'T09 "boundary coverage" is A covered by B while touching B\'s boundary, not equal to B.',
        'The name "covers" (ST_Covers) would hold for any A covered by B, touching or not.',
        "Covered-but-not-touching is T11's case; T09 keeps the two relations disjoint.",
        _BOTH,
    ),
    Deviation(
        "t11-reading",
        "T11 reading",
        "T11 is A contained properly in B (no point of A on B's boundary).",
        '"Non-equal containment" would also accept A touching B\'s boundary from inside.',
        "Proper containment is exactly decidable and disjoint from T09's case.",
        _BOTH,
    ),
    Deviation(
        "displacement-bounds",
        "Displacement bounds",
        "Most editing instances bound how far F0 may move (`max_displacement`, derived per instance "
        "from the reference move: 475 of the 700 edits of the default Helsinki build, seed 0, the "
        "tightest 1 m).",
        "Not stated.",
        "Without a bound, moving F0 far away satisfies many relations trivially.",
        _BOTH,
    ),
    Deviation(
        "band-widths",
        "Band widths",
        "Numeric editing bands have fixed widths: 10 m for distances, 2 m for perimeters; density "
        "bands likewise (scoring.relations.metric_neighbourhood).",
        "Its editing examples show both a 10 m and a 14 m distance band; density bands are not " "mentioned.",
        "A fixed width makes the bands of different instances equally hard.",
        _BOTH,
    ),
    Deviation(
        "map-framing",
        "Map framing",
        "An editing map is framed symmetrically about the scene, grown equally in every direction "
        "until the reference edit's result fits (scoring.constraints.framing).",
        "Not stated.",
        "An image-only model must see where a valid edit can go, and the frame must not point to its "
        "direction. Known limit: the margin still grows with how far the solution lies outside the "
        "scene (not yet independent of it).",
        _BOTH,
    ),
    Deviation(
        "option-rules",
        "Option rules",
        "Distractors are drawn so that the options carry no information about the right one "
        "(resources/relations.md, “Option rules”): eight-way directions three of the seven others "
        "at random; an ordering with its reverse, a one-swap neighbour and that neighbour's "
        "reverse; counts uniform over their range, M14's count itself drawn uniformly; every "
        "item's options reshuffled by an rng of its own.",
        "Near-miss distractors (adjacent directions, the reverse order).",
        "Near misses made the answer the only direction with both neighbours offered (D02) and the "
        "order whose reverse was offered (O01): 100 % from the options alone.",
        _BOTH,
    ),
    Deviation(
        "option-count",
        "Options per item",
        "Four options everywhere except: O06 has three (F0, F1, 'cannot be determined'; under "
        "`paper` the two roads) and, under `paper`, M14's yes/no question two (yes and no equally "
        "often right).",
        "Every QA item in four-option multiple-choice format.",
        "The roads O06 asks about never share a level, so a fourth option 'same level' would never "
        "be right and give itself away; a yes/no question has two answers.",
        _BOTH,
    ),
    Deviation(
        "city-set",
        "Cities",
        "Helsinki (embedded extract) is the default city; other cities need an extract (Detroit has "
        "none in the repository; Paris is roads-only).",
        "A fixed set of cities including Detroit and Paris.",
        "The embedded extract keeps `make run` offline and reproducible.",
        _BOTH,
    ),
)
DEVIATION_IDS = frozenset(d.id for d in DEVIATIONS)


def deviations_for(protocol: str) -> tuple[Deviation, ...]:
    """The deviations that apply to the outputs of `protocol`."""
    return tuple(d for d in DEVIATIONS if str(Protocol(protocol)) in d.protocols)


INTERVAL_START = (3.0, 8.0)  # where the first interval starts, in widths from zero (uniform)
INTERVAL_MIN_WIDTH = 8.0  # tolerances: the answer a quarter width, so two tolerances, inside


def _quantum(w: float) -> float:
    """The unit of a width's second significant digit (bounds are written to it)."""
    return 10.0 ** (math.floor(math.log10(w)) - 1)


def _decimals_of(q: float) -> int:
    return max(0, -math.floor(math.log10(q) + 1e-9))


def interval_choices(
    rng: random.Random, value: float, answer_type: AnswerType
) -> tuple[list[str], str, float] | None:
    """Four adjacent intervals of equal width, the value in interval k (uniform) between a quarter
    and three quarters of its width: the first starts t widths from zero, t drawn uniformly from
    INTERVAL_START independently of k, so neither the width nor the start tells which interval
    holds the value. A value too small for four intervals of INTERVAL_MIN_WIDTH tolerances
    starting INTERVAL_START widths from zero gets none (None: its point options stay). Bounds are
    written to the width's second significant digit. Returns (options, letter of the right one,
    the value's distance to the nearer end)."""
    if answer_type not in _INTERVAL_TYPES or not math.isfinite(value) or value <= 0:
        return None
    unit, _ = _INTERVAL_TYPES[answer_type]
    min_width = INTERVAL_MIN_WIDTH * TOLERANCES[answer_type]
    for _ in range(40):
        k, u, t = rng.randrange(4), rng.uniform(0.3, 0.7), rng.uniform(*INTERVAL_START)
        width = value / (t + k + u)
        if value < min_width * (INTERVAL_START[1] + 4):
            # too small for intervals wide enough: its interval would be told by its size alone
            return None  # (the caller keeps the point options: deviation numeric-options)
        if width < min_width:
            continue
        q = _quantum(width)
        w = round(width / q) * q
        start = max(0.0, round((value - (k + u) * w) / q) * q)
        pos = (value - start) / w - k
        if w > 0 and 0.25 <= pos <= 0.75 and min(pos, 1 - pos) * w >= 2 * TOLERANCES[answer_type]:
            break
    else:
        return None
    dec = _decimals_of(q)
    opts = [
        INTERVAL.render(lo=_fmt(start + i * w, dec), hi=_fmt(start + (i + 1) * w, dec), unit=unit)
        for i in range(4)
    ]
    return opts, LETTERS[k], round(min(pos, 1 - pos) * w, 6)


def _fmt(v: float, decimals: int) -> str:
    return f"{v:.{decimals}f}"


def interval_contains(choice: str, value: float, circular: bool = False) -> bool | None:
    """Does an interval option contain value? None when the option is not an interval."""
    slots = INTERVAL.read(choice.strip())
    if slots is None:
        return None
    lo, hi = float(slots["lo"]), float(slots["hi"])
    if circular:
        return (value - lo) % 360.0 < ((hi - lo) % 360.0 or 360.0)
    return lo <= value < hi


def bearing_choices(rng: random.Random, value: float) -> tuple[list[str], str, float]:
    """Four nearby bearings BEARING_STEP apart in clockwise order, the answer at a random rank:
    (options, letter of the answer, the gap to the nearest other option in degrees)."""
    k = rng.randrange(4)
    opts = [f"{(value + (i - k) * BEARING_STEP) % 360.0:.1f}°" for i in range(4)]
    return opts, LETTERS[k], BEARING_STEP


def _withhold_levels(inst: dict, rng: random.Random) -> None:
    """O06 as in the paper: the level attributes shown on the map's cards only; scored against the
    true answer everywhere, information-sufficient only where the cards are seen. The options are
    the two roads (the competing feature ids; no refusal option, no invitation to refuse)."""
    shown = {}
    for f in inst["scene"]["features"]:
        props = f["properties"]
        levels = {k: props.pop(k) for k in LAYER_ATTRS if k in props}
        shown[f["id"]] = levels
    inst["map_properties"] = shown
    inst["question"] = Q_LAYER_PAPER.render(a="F0", b="F1")  # protocol switch: refusal-invitation
    inst["choices"] = list(ROAD_CHOICES[rng.random() < 0.5])
    inst["correct_choice"] = LETTERS[inst["choices"].index(inst["answer"])]
    inst["answerable"] = {str(m): True for m in MODALITIES}
    inst["information_sufficient"] = {str(m): m.has_image for m in MODALITIES}
    inst["information"] = {
        "attributes": list(LAYER_ATTRS),
        "withheld": [],
        "withheld_from": {"geojson": list(LAYER_ATTRS)},
    }


def as_yes_no_within(inst: dict, rng: random.Random) -> bool:
    """M14 as the paper's yes/no question about one candidate, from the instance's own facts."""
    count = next((f for f in inst["facts"] if f["measure"] == "count_within_distance"), None)
    dists = {f["args"][1]: f["value"] for f in inst["facts"] if f["measure"] == "min_distance"}
    if count is None or not dists:
        return False
    d = float(count["params"]["distance"])
    ids = sorted(dists, key=lambda s: int(s[1:]))
    want_yes = rng.random() < 0.5  # yes and no equally often, where the candidates allow both
    side = [i for i in ids if (dists[i] <= d) == want_yes] or ids
    b = rng.choice(side)
    answer = bool(dists[b] <= d)
    inst.update(
        question=Q_WITHIN_DISTANCE_YES_NO.render(a="F0", b=b, d=d),
        answer_type=AnswerType.YES_NO,
        answer=answer,
        unit=None,
        tolerance=None,
        choices=list(YES_NO_CHOICES),
        correct_choice=LETTERS[YES_NO_CHOICES.index("yes" if answer else "no")],
    )
    inst["facts"] = [
        {"measure": "within_distance", "args": ["F0", b], "params": {"distance": d}, "value": answer},
        {"measure": "min_distance", "args": ["F0", b], "params": {}, "value": dists[b], "unit": "m"},
    ]
    inst["margin"] = {"threshold_gap_m": round(abs(dists[b] - d), 3)}
    return True


def apply_protocol(inst: dict, protocol: str, rng: random.Random, slot: int) -> dict:
    """The instance as `protocol` asks it (unchanged under our own protocol)."""
    if Protocol(protocol) is Protocol.SPATIALGAP:  # protocol switch: gate (each below names its own)
        return inst
    inst["protocol"] = str(Protocol.PAPER)
    if inst["task"] == Task.EDIT:
        inst["edit_reply"] = {"image": PIXEL_EDIT_REPLY}  # protocol switch: map-image-edits
        return inst
    if inst["relation"] == "O06":
        _withhold_levels(inst, rng)  # protocol switch: o06-attributes
    elif inst["relation"] == "M14":
        as_yes_no_within(inst, rng)  # protocol switch: m14-count
    elif inst["family"] == Family.TOPOLOGY and slot % LABEL_EVERY == 1:
        as_label_question(inst, rng)  # protocol switch: topology-questions
    elif inst.get("answer_type") == AnswerType.BEARING and isinstance(inst.get("answer"), (int, float)):
        # protocol switch: bearing-options
        inst["choices"], inst["correct_choice"], gap = bearing_choices(rng, float(inst["answer"]))
        inst["margin"] = {**inst["margin"], "option_gap_deg": gap}
    elif inst.get("answer_type") in _INTERVAL_TYPES and isinstance(inst.get("answer"), (int, float)):
        # protocol switch: numeric-options
        made = interval_choices(rng, float(inst["answer"]), AnswerType(inst["answer_type"]))
        if made is not None:
            inst["choices"], inst["correct_choice"], edge = made
            inst["margin"] = {**inst["margin"], "interval_edge": edge}
    return inst


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def protocol_section() -> str:
    """The relation reference's section on the two protocols and every deviation from the paper."""
    lines = [
        "\n## Protocols: `spatialgap` (default) and `paper`\n",
        "`spatialgap build --protocol paper` builds the benchmark as the GeoSpatialBench paper "
        "specifies; the manifest, every run and every result record the protocol. Under `paper`: O06 "
        "QA shows `layer` / `bridge` / `tunnel` on the map's attribute cards only (`map_properties`); "
        "every modality is scored against the true answer (`answerable` is true everywhere: a model "
        "that lacks the attributes guesses) and `information_sufficient` is false for `geojson`, so "
        "the information-sufficient score drops O06 in the geometry-only condition; distance, "
        "perimeter and density options are four adjacent intervals (`from a to b`, the answer at "
        "least a quarter width from either end); bearing (D04) options are four nearby bearings "
        f"{BEARING_STEP:g}° apart in clockwise order, the answer at a random rank; M14 is the yes/no "
        'question "Is Fk within d m of F0?" about one of its six candidates (answer type '
        "`yes_no`, options `yes` / `no`); every fourth topology question (slots 1, 5, 9, ...) asks "
        "for the label of one "
        "pair (answer type `topology_class`); an edit on the map image is replied as "
        '`{"pixel_geometry": <GeoJSON geometry in [column, row]>, "attributes": {...}}`, mapped '
        "back to the task CRS through the map's sidecar; no prompt invites the answer 'cannot be "
        "determined' (O06's question drops its refusal sentence too).\n",
        "**Topology labels.** The labels are, most specific first: "
        + ", ".join(f"`{lab}`" for lab in LABELS)
        + ". Each is the exact GEOS predicate of (x, y) of the same name (`contains` is within(y, x), "
        "`covers` is covered_by(y, x)). Several can hold at once (within implies covered by and "
        'intersects); the answer is the first label of this order that holds ("most specific"), '
        "and no option is another label that holds, so exactly one option is true. The pair is "
        "chosen only where a 1 m change could not alter its class (`classify`); it is the "
        "relation's own pair (the candidate with the relation) where that pair's class is clear. "
        "Distractors are three labels that do not hold, drawn in proportion to how often each "
        "label is an answer (`LABEL_WEIGHTS` of scoring.relations.paper_topology), so that a label "
        "offered is right about as often as any other.\n",
        "\n## Deviations from the paper\n",
        "Every place where a protocol's outputs depart from the paper, or where the paper is silent "
        "and we chose; `applies to` names the protocols whose outputs it concerns "
        "(`scoring.relations.paper.DEVIATIONS`).\n",
        "| id | deviation | ours | the paper | reason | applies to |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| `{d.id}` | {_cell(d.title)} | {_cell(d.ours)} | {_cell(d.paper)} | {_cell(d.reason)} | "
        f"{', '.join(f'`{p}`' for p in d.protocols)} |"
        for d in DEVIATIONS
    ]
    return "\n".join(lines) + "\n"
