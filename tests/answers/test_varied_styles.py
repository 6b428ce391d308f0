"""Issue 41: a varied-format agent of our own (tests/answers/style_agent.py), with styles no other
test uses, read by the reply reader.

- Offline: every style applied to canonical answers of every answer type (synthetic contexts),
  read with `parse_answer` / `parse_choice` / `parse_edit` directly. Fast; `pytest -s` prints the
  read rate per style and every misread.
- Pipeline: the agent served over loopback HTTP and run with `spatialgap run` over every task (qa,
  edit), form (open, mcq) and modality (geojson, image, together) of a small benchmark, then
  `spatialgap score`d; each sample's verdict is compared with the verdict of the canonical reply
  it was rewritten from (run and scored the same way).

An unambiguous styled reply is read as intended when it gets the canonical reply's reading
(offline) or verdict (pipeline); an ambiguous one when it is unparsed. Target (issue 41): >= 99 %
of unambiguous replies, every ambiguous one unparsed, and no crash.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from style_agent import NUMERIC, STYLES, STYLES_BY_NAME, Case, Style, applicable, first_turn, restyle

from scoring.answers import ANSWER_FORMATS, Parsed, parse_answer, parse_choice, parse_edit
from scoring.build.builder import build_benchmark
from scoring.cli import main
from scoring.render import render_benchmark
from scoring.runner.agents import agent, get_agent, parse_prompt, registry, start_server
from scoring.runner.agents.edit_search import EDIT_REFUSAL
from scoring.runner.prompts import build_messages
from scoring.vocab import Modality

TARGET = 0.99

# ------------------------------------------------------------------- synthetic canonical answers

Q_DIST = "What is the minimum distance between F0 and F1, in metres? (Planar distance in the task CRS.)"
Q_PERIM = "What is the total perimeter of F0, F1 and F2 together, in metres?"
Q_AREA = "What is the total area of F0 and F1, in square metres?"
Q_BEARING = (
    "What is the bearing from F0 to F1, in degrees clockwise from grid north? Directions are bearings "
    "between the features' centroids in the task CRS, measured clockwise from grid north (+y). Give a "
    "value in [0, 360)."
)
Q_DENSITY = (
    "Of the points of interest F1, F2, F3, F4, F5, count those lying in F0 and divide by F0's area in "
    "km². What is this POI density, in POIs per km²? (Give at least three decimals.)"
)
Q_COUNT = (
    "How many of the features F1, F2, F3, F4, F5 and F6 lie within 50 m of F0 (minimum distance at "
    "most 50 m)?"
)
Q_DIR4 = (
    "In which direction (N, E, S or W) does F1 lie as seen from F0? Here N covers [315°, 45°), "
    "E [45°, 135°), S [135°, 225°) and W [225°, 315°)."
)
Q_DIR8 = (
    "In which direction (N, NE, E, SE, S, SW, W or NW) does F1 lie as seen from F0? Here each "
    "direction covers the 45° sector centred on it (N = [337.5°, 22.5°))."
)
Q_REL = (
    "An observer stands at F0 and moves along heading 315° (clockwise from grid north). Relative to "
    "the observer, is F1 ahead, behind, left or right? Ahead means within 45° of the heading, behind "
    "within 45° of the opposite direction."
)
Q_AXIS = (
    "Which axis best describes the orientation of road F0, taken as the straight line from its first "
    "vertex to its last: N-S, NE-SW, E-W or NW-SE? Axes are 45° wide, centred on 0°, 45°, 90° and 135°."
)
Q_TOUCH = (
    "Exactly one of the features F1, F2, F3 and F4 touches F0 (their boundaries meet but their "
    "interiors do not intersect). Which one? Answer with its feature id."
)
Q_ABOVE = (
    "Roads F0 and F1 cross in plan view. Which of them lies above the other? Use the roads' "
    "attributes. If the information given is not sufficient, answer 'cannot be determined'."
)
Q_ORDER = (
    "Order F1, F2 and F3 by their position along road F0, travelling from its first vertex to its "
    "last. Answer with the ids in order, separated by commas."
)
Q_YESNO = "Does F1 lie within 100 m of F0 (minimum distance at most 100 m)?"
Q_TOPO = "Which topological relation holds between F0 and F1 (a DE-9IM class)?"
IDS = ("F0", "F1", "F2", "F3", "F4")
EDIT_Q = (
    "Edit only F0 so that all of the following hold:\n1. F0 is at least 30 m from F1.\n"
    "2. F0 does not cross F2."
)

OPEN: list[tuple[str, str, tuple[str, ...]]] = [
    ("distance", Q_DIST, ("148.1355", "5.0314", "1234.5")),
    ("perimeter", Q_PERIM, ("308.7482", "1045.2")),
    ("area", Q_AREA, ("5300", "812.5", "12875.25")),
    ("bearing", Q_BEARING, ("23.234", "339.959", "309.5", "118")),
    ("density", Q_DENSITY, ("1496.51752", "239.348126", "69.0")),
    ("count", Q_COUNT, ("3", "0", "4")),
    ("direction4", Q_DIR4, ("N", "W")),
    ("direction8", Q_DIR8, ("SW", "SE", "NE")),
    ("relative_direction", Q_REL, ("right", "left", "behind")),
    ("axis", Q_AXIS, ("NE-SW", "N-S")),
    ("feature_id", Q_TOUCH, ("F2", "F3")),
    ("feature_id", Q_ABOVE, ("F0",)),
    ("ordering", Q_ORDER, ("F2, F3, F1", "F1, F3, F2")),
    ("yes_no", Q_YESNO, ("no", "yes")),
    ("topology_class", Q_TOPO, ("touches", "within")),
]
CHOICE: list[tuple[str, tuple[str, ...], str]] = [
    (Q_DIST, ("148.1 m", "325.9 m", "185.2 m", "266.6 m"), "A"),
    (Q_PERIM, ("196.3 m", "306.7 m", "245.4 m", "539.9 m"), "C"),
    (Q_BEARING, ("43.2°", "23.2°", "68.2°", "338.2°"), "B"),
    (Q_DENSITY, ("1197.214 per km²", "1496.518 per km²", "2244.776 per km²", "2693.732 per km²"), "B"),
    (Q_COUNT, ("4", "2", "5", "3"), "D"),
    (Q_DIR8, ("NW", "SE", "E", "S"), "B"),
    (Q_REL, ("ahead", "right", "behind", "left"), "D"),
    (Q_AXIS, ("E-W", "NE-SW", "NW-SE", "N-S"), "C"),
    (Q_TOUCH, ("F1", "F3", "F4", "F2"), "D"),
    (Q_ABOVE, ("F1", "F0", "cannot be determined", "neither: they are at the same level"), "B"),
    (Q_ORDER, ("F1, F3, F2", "F2, F1, F3", "F3, F2, F1", "F2, F3, F1"), "D"),
    (Q_YESNO, ("yes", "no"), "B"),
    # unanswerable: the right letter is the refusal option
    (Q_ABOVE, ("F1", "F0", "cannot be determined", "neither: they are at the same level"), "C"),
    (Q_DIST, ("148.1 m", "325.9 m", "185.2 m", "cannot be determined"), "D"),
]
EDITS = (
    '{"operations": [{"op": "translate", "dx": 12.5, "dy": -3.0}]}',
    '{"operations": [{"op": "rotate", "degrees_clockwise": 30.0, "origin": "centroid"}, '
    '{"op": "scale", "factor": 1.2, "origin": [385010.5, 6672004.0]}]}',
    '{"operations": [{"op": "set_attribute", "name": "layer", "value": 1}]}',
    EDIT_REFUSAL,
)


def synthetic_cases() -> list[Case]:
    cases = [Case(t, a, question=q, ids=IDS) for t, q, answers in OPEN for a in answers]
    cases += [Case(t, "cannot be determined", question=q, ids=IDS) for t, q, _ in OPEN]  # unanswerable
    cases += [Case("choice", letter, question=q, choices=ch, ids=IDS) for q, ch, letter in CHOICE]
    cases += [Case("edit", e, question=EDIT_Q, ids=IDS) for e in EDITS]
    return cases


# ------------------------------------------------------------------------------------ reading


def read(case: Case, text: str) -> Parsed:
    """The reader's reading of `text` as the case's answer type, with the scorer's context."""
    if case.answer_type == "choice":
        return parse_choice(text, len(case.choices), list(case.choices))
    if case.answer_type == "edit":
        return parse_edit(text)
    ctx: dict = {}
    if case.answer_type == "feature_id":
        ctx["valid_ids"] = list(case.ids)
    if case.answer_type == "ordering":
        ctx["ids"] = sorted(case.named[:-1] if len(case.named) > 1 else case.ids)
    return parse_answer(text, case.answer_type, **ctx)


def canonical_reply(case: Case) -> str:
    return case.answer if case.answer_type == "edit" else f"Answer: {case.answer}"


def as_intended(case: Case, style: Style, got: Parsed) -> bool:
    """Whether the reading is the one a careful grader gives the styled reply."""
    if style.ambiguous:
        return not got.ok and not got.refusal
    if case.refusal:
        return got.refusal or (case.answer_type == "choice" and got.ok and got.value == case.answer)
    if not got.ok:
        return False
    want = read(case, canonical_reply(case)).value
    if case.answer_type in NUMERIC:
        return bool(ANSWER_FORMATS[case.answer_type].check(want, got.value, None))
    return bool(got.value == want)


def shown(got: Parsed) -> str:
    if got.refusal:
        return "refusal"
    return repr(got.value) if got.ok else f"unparsed ({got.reason})"


def expected_of(case: Case, style: Style) -> str:
    if style.ambiguous:
        return "unparsed"
    return "refusal" if case.refusal else repr(read(case, canonical_reply(case)).value)


@dataclass(frozen=True)
class Reading:
    """One styled reply and how it was read: `expected` and `got` are readings (offline) or
    verdicts (pipeline)."""

    style: Style
    label: str  # the answer type (and, in the pipeline, modality and form)
    reply: str
    expected: str
    got: str
    intended: bool


def offline_readings() -> list[Reading]:
    out = []
    for i, case in enumerate(synthetic_cases()):
        for style in applicable(case):
            for k in range(2):  # two variants of each style's random choices
                reply = style.render(case, random.Random(f"{style.name}/{i}/{k}"))
                assert reply is not None
                got = read(case, reply)
                intended = as_intended(case, style, got)
                out.append(
                    Reading(style, case.answer_type, reply, expected_of(case, style), shown(got), intended)
                )
    return out


def table(outcomes: list[Reading], title: str) -> tuple[str, float, float]:
    """The per-style table, and the read rates of unambiguous and ambiguous replies."""
    by: dict[str, list[Reading]] = defaultdict(list)
    for o in outcomes:
        by[o.style.name].append(o)
    lines = [f"\n{title}", f"{'style':38} {'family':11} {'n':>5} {'read':>5} {'rate':>7}"]
    for s in STYLES:
        rows = by.get(s.name, [])
        if rows:
            ok = sum(o.intended for o in rows)
            flag = " (ambiguous)" if s.ambiguous else ""
            lines.append(f"{s.name:38} {s.family:11} {len(rows):5} {ok:5} {ok / len(rows):7.1%}{flag}")
    clear = [o for o in outcomes if not o.style.ambiguous]
    amb = [o for o in outcomes if o.style.ambiguous]
    rate = sum(o.intended for o in clear) / max(1, len(clear))
    amb_rate = sum(o.intended for o in amb) / max(1, len(amb))
    lines.append(
        f"unambiguous: {rate:.1%} of {len(clear)}; ambiguous read as unparsed: {amb_rate:.1%} of {len(amb)}"
    )
    lines.append("misreads (style | type | reply | expected | got):")
    for o in outcomes:
        if not o.intended:
            lines.append(f"  {o.style.name} | {o.label} | {o.reply!r} | {o.expected} | {o.got}")
    return "\n".join(lines), rate, amb_rate


# -------------------------------------------------------------------------------- offline tests


def test_every_style_applies_somewhere_and_is_deterministic():
    cases = synthetic_cases()
    for s in STYLES:
        hits = [c for c in cases if s.render(c, random.Random(1)) is not None]
        assert hits, f"style {s.name} applies to no case"
        for c in hits:
            assert s.render(c, random.Random(7)) == s.render(c, random.Random(7))
    assert len(STYLES) >= 40 and len({s.family for s in STYLES}) >= 9
    assert len(STYLES_BY_NAME) == len(STYLES)


def test_every_case_has_unambiguous_and_ambiguous_styles():
    for case in synthetic_cases():
        styles = applicable(case)
        assert any(not s.ambiguous for s in styles), case
        if case.answer_type != "edit":
            assert any(s.ambiguous for s in styles), case


def test_canonical_replies_are_read_as_themselves():
    """The baseline the styles are compared with: the canonical reply reads as its answer."""
    for case in synthetic_cases():
        got = read(case, canonical_reply(case))
        if case.refusal:
            assert got.refusal or (case.answer_type == "choice" and got.value == case.answer), case
        else:
            assert got.ok, (case, got)


def test_styled_replies_never_crash_the_reader_offline():
    for case in synthetic_cases():
        for style in applicable(case):
            reply = style.render(case, random.Random(3))
            got = read(case, reply)
            assert isinstance(got, Parsed) and (got.ok or got.reason)


def test_styles_read_as_intended_offline():
    text, rate, amb_rate = table(offline_readings(), "offline: styled replies read by the reader")
    print(text)
    assert rate >= TARGET, f"unambiguous replies read as intended: {rate:.1%}"
    assert amb_rate >= TARGET, f"ambiguous replies read as unparsed: {amb_rate:.1%}"


# ------------------------------------------------------------------------- the pipeline, over HTTP

RELATIONS = ["D01", "D02", "D04", "D05", "D06", "M01", "M12", "M14", "M18", "O01", "O06", "T04"]
MODALITIES = ("geojson", "image", "together")
CANONICAL = "styles-canonical"
STYLED = ("styles-varied", "styles-varied-2")  # two passes: each picks its styles with its own salt


class Oracle:
    """Which benchmark sample a request is (its first user turn's text and image), and the
    canonical reply: the tools agent's answer to the instance asked with its GeoJSON (so that image
    requests get the right answer too); an edit is answered as asked (its units are the modality's)."""

    def __init__(self, bench: Path):
        self.instances = {
            d["id"]: d for name in ("qa.jsonl", "edit.jsonl") for d in map(json.loads, (bench / name).open())
        }
        self.samples: dict[tuple[str, str], tuple[str, str, str]] = {}
        for iid, inst in self.instances.items():
            forms = ("open", "mcq") if inst["task"] == "qa" else ("edit",)
            for modality in MODALITIES:
                png = (bench / "maps" / f"{iid}.png").read_bytes() if modality != "geojson" else None
                for form in forms:
                    key = self.key(build_messages(inst, Modality(modality), form, png))
                    self.samples[key] = (iid, modality, form)

    @staticmethod
    def key(messages: list[dict]) -> tuple[str, str]:
        v = parse_prompt(first_turn(messages))
        return v.text, hashlib.sha256((v.image_url or "").encode()).hexdigest()

    def sample(self, messages: list[dict]) -> tuple[str, str, str]:
        return self.samples[self.key(messages)]

    def canonical(self, messages: list[dict]) -> str:
        iid, _, form = self.sample(messages)
        inst = self.instances[iid]
        if inst["task"] == "edit":
            return get_agent("tools")(messages)
        return get_agent("tools")(build_messages(inst, Modality.GEOJSON, form, None))


Sample = tuple[str, str, str]  # instance id, modality, form ("edit" for an edit)


@dataclass
class Pipeline:
    """What the runs left: verdict rows by agent and sample, and each styled reply's style."""

    verdicts: dict[str, dict[Sample, dict]] = field(default_factory=lambda: defaultdict(dict))
    style_of: dict[tuple[str, Sample], tuple[str, str]] = field(default_factory=dict)  # (agent, sample)


def register_agents(oracle: Oracle, style_of: dict[tuple[str, Sample], tuple[str, str]]) -> None:
    """The canonical agent and the styled ones (a corrective follow-up gets the same reply)."""
    agent(CANONICAL)(oracle.canonical)

    def styled(name: str, salt: str) -> None:
        @agent(name)
        def styled_agent(messages: list[dict]) -> str:
            chosen, text = restyle(messages, oracle.canonical(messages), salt)
            style_of[name, oracle.sample(messages)] = (chosen.name, text)
            return text

    for i, name in enumerate(STYLED):
        styled(name, str(i or ""))


@pytest.fixture(scope="module")
def style_bench(tmp_path_factory) -> Path:
    """Two QA instances and one edit per relation of every answer type the catalogue asks, with
    unanswerable variants, and every map rendered."""
    out = tmp_path_factory.mktemp("stylebench") / "helsinki"
    build_benchmark(
        None,
        out,
        seed=0,
        n_qa=2,
        n_edit=1,
        relations=RELATIONS,
        jobs=1,
        progress=False,
        unanswerable_share=0.3,
    )
    render_benchmark(out, jobs=1, progress=False)
    return out


@pytest.fixture(scope="module")
def pipeline(style_bench, tmp_path_factory) -> Iterator[Pipeline]:
    """The canonical and the styled agents served over loopback, run over every task, form and
    modality, and scored."""
    found = Pipeline()
    register_agents(Oracle(style_bench), found.style_of)
    root = tmp_path_factory.mktemp("styleruns")
    runs = []
    for name in (CANONICAL, *STYLED):
        server, _ = start_server(name)
        try:
            for modality in MODALITIES:
                for task in ("qa", "edit"):
                    d = root / f"{name}-{modality}-{task}"
                    argv = [
                        "run",
                        "--bench",
                        str(style_bench),
                        "--endpoint",
                        server.base_url,
                        "--model",
                        name,
                    ]
                    argv += ["--modality", modality, "--task", task, "--out", str(d), "--no-progress"]
                    assert main(argv) == 0
                    runs.append(d)
        finally:
            server.shutdown()
            server.server_close()
    argv = ["score", "--bench", str(style_bench), "--out", str(root / "results"), "--no-progress"]
    assert main(argv + [a for d in runs for a in ("--run", str(d))]) == 0
    for row in map(json.loads, (root / "results" / "verdicts.jsonl").open()):
        form = row["form"] if row["task"] == "qa" else "edit"
        found.verdicts[row["model"]][row["id"], row["modality"], form] = row
    yield found
    for name in (CANONICAL, *STYLED):
        registry.AGENTS.pop(name, None)


def pipeline_readings(run: Pipeline) -> tuple[list[Reading], list[str]]:
    """Each styled sample's reading against its canonical twin's verdict; and the samples left
    out (their canonical reply itself was not read)."""
    rows, skipped = [], []
    verdicts = run.verdicts
    for model in STYLED:
        for sample, row in sorted(verdicts[model].items()):
            name, reply = run.style_of[model, sample]
            style = STYLES_BY_NAME[name]
            canon = verdicts[CANONICAL][sample]
            if canon["verdict"] in ("unparsed", "error"):
                skipped.append(f"{sample}: canonical {canon['verdict']} ({canon['reason']})")
                continue
            want = "unparsed" if style.ambiguous else canon["verdict"]
            got = row["verdict"]
            label = f"{row['answer_type'] or 'edit'}/{sample[1]}/{sample[2]}"
            detail = f"{got} ({row['reason']})" if got != want else got
            rows.append(Reading(style, label, reply, want, detail, got == want))
    return rows, skipped


def test_pipeline_runs_every_task_form_and_modality_without_a_crash(pipeline):
    verdicts, style_of = pipeline.verdicts, pipeline.style_of
    for name in (CANONICAL, *STYLED):
        rows = verdicts[name]
        assert {(m, f) for _, m, f in rows} == {(m, f) for m in MODALITIES for f in ("open", "mcq", "edit")}
        crashed = [(k, r["reason"]) for k, r in rows.items() if r["verdict"] == "error"]
        assert not crashed, f"{name}: {crashed[:5]}"
    for name in STYLED:
        assert set(verdicts[name]) == set(verdicts[CANONICAL]) == {k for m, k in style_of if m == name}
    # the baseline reads: the canonical replies are all read (image edits are answered blind: wrong)
    assert not [k for k, r in verdicts[CANONICAL].items() if r["verdict"] == "unparsed"]
    assert {r["verdict"] for r in verdicts[CANONICAL].values()} >= {"correct", "correct_refusal"}
    used = {style for style, _ in style_of.values()}
    assert len(used) >= 0.9 * len(STYLES), sorted(set(STYLES_BY_NAME) - used)


def test_styles_read_as_intended_in_the_pipeline(pipeline):
    rows, skipped = pipeline_readings(pipeline)
    text, rate, amb_rate = table(rows, "pipeline: verdicts of styled replies vs their canonical twins")
    print(text)
    print("left out:", skipped or "none")
    assert rate >= TARGET, f"unambiguous replies read as intended: {rate:.1%}"
    assert amb_rate >= TARGET, f"ambiguous replies read as unparsed: {amb_rate:.1%}"
