"""`spatialgap build --protocol paper` on the embedded Helsinki extract: the manifest and every
instance say which protocol; O06 attributes on the map only, scored against the true answer, with
the information-sufficient score dropping the GeoJSON; distance-like options as adjacent intervals,
bearings as nearby bearings; topology also asked as a label question whose distractors nearly
hold; M14 as the paper's yes/no question; no refusal invitation in paper prompts; every deviation
listed and every protocol switch in the code naming one; our own protocol unchanged by default."""

import itertools
import json
import re
from pathlib import Path

import jsonschema
import pytest
from shapely.geometry import shape

from scoring.build.builder import build_benchmark
from scoring.constraints.framing import MAP_FRAME
from scoring.errors import InputError
from scoring.oracle import angle_diff, vertical_level
from scoring.paths import RESOURCES_DIR
from scoring.relations.base import TOLERANCES
from scoring.relations.paper import (
    BEARING_STEP,
    DEVIATION_IDS,
    DEVIATIONS,
    INTERVAL,
    LABEL_EVERY,
    LAYER_ATTRS,
    Q_LAYER_PAPER,
    Q_TOPOLOGY_CLASS,
    Q_WITHIN_DISTANCE_YES_NO,
    TOPOLOGY_CLASSES,
    deviations_for,
    exact_topology_class,
    interval_contains,
)
from scoring.relations.paper_topology import LABEL_WEIGHTS, label_holds
from scoring.relations.reference import render as render_reference
from scoring.vocab import PROTOCOLS, AnswerType, TopologyClass

REPO = Path(__file__).resolve().parents[2]

SCHEMA = json.loads((RESOURCES_DIR / "schema" / "instance.schema.json").read_text())
RELATIONS = ["O06", "T02", "T03", "T04", "T06", "T09", "M01", "M12", "M14", "M18", "D04", "D01"]


def load(bench: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (bench / name).read_text().splitlines()]


@pytest.fixture(scope="module")
def paper(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("paper") / "helsinki"
    build_benchmark(
        None, out, n_qa=12, n_edit=3, relations=RELATIONS, jobs=2, progress=False, protocol="paper"
    )
    return out


@pytest.fixture(scope="module")
def ours(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ours") / "helsinki"
    build_benchmark(None, out, n_qa=12, n_edit=3, relations=RELATIONS, jobs=2, progress=False)
    return out


def test_manifest_and_instances_name_the_protocol(paper, ours):
    mp = json.loads((paper / "manifest.json").read_text())
    mo = json.loads((ours / "manifest.json").read_text())
    assert mp["protocol"] == "paper" and mo["protocol"] == "spatialgap"
    assert mp["maps"]["frame"] == MAP_FRAME and "reference_edit_result" in MAP_FRAME["edit"]
    assert "protocol paper" in (paper / "build_report.md").read_text()
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for inst in load(paper, "qa.jsonl") + load(paper, "edit.jsonl"):
        assert inst["protocol"] == "paper"
        assert not list(validator.iter_errors(inst)), inst["id"]
    edits = load(paper, "edit.jsonl")
    assert edits and all(i["edit_reply"] == {"image": "pixel_geometry"} for i in edits)
    # our own protocol stays exactly as it was: no protocol fields on its instances
    for inst in load(ours, "qa.jsonl") + load(ours, "edit.jsonl"):
        assert not {"protocol", "map_properties", "edit_reply"} & set(inst), inst["id"]


def test_o06_attributes_are_on_the_map_only(paper):
    o06 = [i for i in load(paper, "qa.jsonl") if i["relation"] == "O06"]
    assert len(o06) >= 5
    for inst in o06:
        for f in inst["scene"]["features"]:
            assert not set(LAYER_ATTRS) & set(f["properties"]), inst["id"]
        shown = inst["map_properties"]
        assert set(shown) == {"F0", "F1"}
        levels = {fid: vertical_level(p) for fid, p in shown.items()}
        assert inst["answer"] == max(levels, key=levels.get) and len(set(levels.values())) == 2
        # scored against the true answer everywhere; information-sufficient only with the cards
        assert all(inst["answerable"].values())
        assert inst["information_sufficient"]["geojson"] is False
        assert inst["information_sufficient"]["image"] is True and inst["information_sufficient"]["together"]
        assert (
            Q_LAYER_PAPER.read(inst["question"]) is not None
            and "cannot be determined" not in inst["question"]
        )
        assert inst["information"]["attributes"] == list(LAYER_ATTRS)
        assert inst["information"]["withheld_from"] == {"geojson": list(LAYER_ATTRS)}


def _bounds(choice: str) -> tuple[float, float]:
    slots = INTERVAL.read(choice)
    assert slots is not None, choice
    return float(slots["lo"]), float(slots["hi"])


def test_numeric_options_are_adjacent_intervals_unless_too_small_for_them(paper):
    numeric = [i for i in load(paper, "qa.jsonl") if i["answer_type"] in ("distance", "perimeter", "density")]
    assert {i["answer_type"] for i in numeric} == {"distance", "perimeter", "density"}
    small = [i for i in numeric if i["answer"] < 96 * TOLERANCES[AnswerType(i["answer_type"])]]
    assert all(INTERVAL.read(c) is None for i in small for c in i["choices"])  # point options kept
    assert len(small) < len(numeric)
    for inst in (i for i in numeric if i not in small):
        bounds = [_bounds(c) for c in inst["choices"]]
        for (_, hi), (lo, _) in itertools.pairwise(bounds):
            assert hi == lo, inst["choices"]
        width = bounds[0][1] - bounds[0][0]
        holds = [interval_contains(c, inst["answer"]) for c in inst["choices"]]
        assert holds.count(True) == 1 and "ABCD"[holds.index(True)] == inst["correct_choice"]
        # no tolerance-sized doubt about which interval: the answer sits a quarter width inside
        edge = inst["margin"]["interval_edge"]
        assert edge >= width / 4 - 1e-6
        assert edge >= 2 * TOLERANCES[AnswerType(inst["answer_type"])]


def test_bearing_options_are_nearby_bearings(paper):
    d04 = [i for i in load(paper, "qa.jsonl") if i["relation"] == "D04"]
    assert len(d04) >= 10
    letters = set()
    for inst in d04:
        values = [float(c.rstrip("°")) for c in inst["choices"]]
        assert not any(INTERVAL.read(c) for c in inst["choices"])  # directional, not intervals
        steps = [(b - a) % 360 for a, b in itertools.pairwise(values)]
        assert all(abs(st - BEARING_STEP) < 0.11 for st in steps), inst["choices"]  # clockwise, nearby
        near = [angle_diff(v, inst["answer"]) <= TOLERANCES[AnswerType.BEARING] for v in values]
        assert near.count(True) == 1 and "ABCD"[near.index(True)] == inst["correct_choice"]
        letters.add(inst["correct_choice"])
    assert len(letters) >= 3  # the answer's rank varies


def test_m14_is_the_papers_yes_no_question(paper):
    m14 = [i for i in load(paper, "qa.jsonl") if i["relation"] == "M14"]
    assert len(m14) >= 10
    answers = set()
    for inst in m14:
        slots = Q_WITHIN_DISTANCE_YES_NO.read(inst["question"])
        assert slots is not None and inst["answer_type"] == "yes_no"
        geoms = {f["id"]: shape(f["geometry"]) for f in inst["scene"]["features"]}
        gap = geoms[slots["a"]].distance(geoms[slots["b"]])
        assert inst["answer"] is (gap <= float(slots["d"]))
        assert abs(gap - float(slots["d"])) >= 2 - 1e-6  # no candidate near the threshold
        assert inst["choices"] == ["yes", "no"]
        assert inst["choices"]["AB".index(inst["correct_choice"])] == ("yes" if inst["answer"] else "no")
        answers.add(inst["answer"])
    assert answers == {True, False}


def test_topology_asked_as_a_label_of_its_own_pair_on_every_fourth_slot(paper):
    topo = [i for i in load(paper, "qa.jsonl") if i["family"] == "topology"]
    classes = [i for i in topo if i["answer_type"] == "topology_class"]
    assert classes and all(int(i["id"][-3:]) % LABEL_EVERY == 1 for i in classes)
    assert all(i["answer_type"] == "feature_id" for i in topo if int(i["id"][-3:]) % LABEL_EVERY != 1)
    assert len(classes) >= 0.8 * sum(1 for i in topo if int(i["id"][-3:]) % LABEL_EVERY == 1)
    for inst in classes:
        slots = Q_TOPOLOGY_CLASS.read(inst["question"])
        assert slots is not None
        geoms = {f["id"]: shape(f["geometry"]) for f in inst["scene"]["features"]}
        x, y = geoms[slots["b"]], geoms[slots["a"]]
        assert inst["answer"] == exact_topology_class(x, y)
        assert inst["answer"] in TOPOLOGY_CLASSES and set(inst["choices"]) <= set(TOPOLOGY_CLASSES)
        assert inst["choices"]["ABCD".index(inst["correct_choice"])] == inst["answer"]
        # exactly one option holds; the others are labels that are sometimes an answer
        assert [label_holds(TopologyClass(c), x, y) for c in inst["choices"]].count(True) == 1
        assert all(LABEL_WEIGHTS[TopologyClass(c)] > 0 for c in inst["choices"])
    own = {"T01": {"equals"}, "T02": {"disjoint"}, "T04": {"touches"}, "T05": {"crosses"}}
    own |= {"T06": {"within", "contains"}, "T08": {"overlaps"}, "T11": {"within", "contains"}}
    asked = [i for i in classes if i["relation"] in own]
    # each relation's label item asks about its own pair (its own label) where that pair is clear
    assert sum(i["answer"] in own[i["relation"]] for i in asked) >= 0.8 * len(asked)
    # the label set holds every label the paper's families use
    assert {"intersects", "covers", "covered by"} <= set(TOPOLOGY_CLASSES)
    assert len({i["answer"] for i in classes}) >= 3


def test_paper_prompts_carry_no_refusal_invitation(paper, ours):
    from scoring.runner.prompts import build_messages

    def texts(bench: Path) -> list[str]:
        out = []
        for inst in load(bench, "qa.jsonl"):
            for form in ("open", "mcq"):
                msgs = build_messages(inst, "geojson", form, None)
                out.append(" ".join(str(m["content"]) for m in msgs))
        return out

    assert not [t for t in texts(paper) if "cannot be determined" in t]
    assert all("cannot be determined" in t for t in texts(ours))


def test_unknown_protocol_is_a_one_line_error(tmp_path):
    with pytest.raises(InputError, match="unknown protocol 'journal'"):
        build_benchmark(None, tmp_path / "x", protocol="journal", progress=False)


def test_relation_reference_lists_each_deviation_with_its_reason():
    text = render_reference()
    assert "## Protocols: `spatialgap` (default) and `paper`" in text
    assert "## Deviations from the paper" in text  # the anchor the report's method note links to
    for d in DEVIATIONS:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{d.id}` |"))
        assert d.title in row and d.reason.split(";")[0] in row
        assert d.protocols and set(d.protocols) <= set(PROTOCOLS)
    assert len(DEVIATION_IDS) == len(DEVIATIONS)
    assert {d.id for d in deviations_for("paper")} < DEVIATION_IDS
    assert (RESOURCES_DIR / "relations.md").read_text() == text


# a protocol switch: code that does something else depending on the protocol
_SWITCH = re.compile(r"\bprotocol\)?\s*(?:==|!=|\bis\b)\s")
_MARK = re.compile(r"protocol switch: ([\w-]+)")


def test_every_protocol_switch_names_its_deviation():
    marks: set[str] = set()
    unmarked = []
    files = [
        *sorted((REPO / "scoring").rglob("*.py")),
        *sorted((REPO / "resources" / "prompts").glob("*.j2")),
    ]
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines):
            marks.update(_MARK.findall(line))
            if _SWITCH.search(line) and not any(_MARK.search(x) for x in lines[max(0, n - 2) : n + 1]):
                unmarked.append(f"{path.relative_to(REPO)}:{n + 1}: {line.strip()}")
    assert unmarked == []
    assert marks - {"gate"} <= DEVIATION_IDS  # every switch names an entry of the table
    # every deviation that only one protocol has is a switch somewhere in the code
    one_sided = {d.id for d in DEVIATIONS if len(d.protocols) == 1}
    assert one_sided <= marks


def test_evaluate_builds_under_the_asked_protocol_and_never_reuses_another(paper, tmp_path):
    from scoring.cli import make_parser
    from scoring.evaluate.cities import bench_current
    from scoring.evaluate.cli import plan_from_args
    from scoring.evaluate.plan import City

    args = make_parser().parse_args(["evaluate", "--out", str(tmp_path / "e"), "--protocol", "paper"])
    assert {c.protocol for c in plan_from_args(args).cities} == {"paper"}
    args = make_parser().parse_args(["evaluate", "--out", str(tmp_path / "e")])
    assert {c.protocol for c in plan_from_args(args).cities} == {"spatialgap"}
    root = tmp_path / "city"
    root.mkdir()
    (root / "bench").symlink_to(paper, target_is_directory=True)
    same = City("helsinki", root, None, 0, 12, 3, tuple(RELATIONS), protocol="paper")
    assert bench_current(same)
    assert not bench_current(City("helsinki", root, None, 0, 12, 3, tuple(RELATIONS)))


def test_o06_geojson_is_scored_against_the_truth_with_one_verdict_for_tables_and_refusals(paper, tmp_path):
    from scoring.formats.benchmark import Benchmark
    from scoring.score.results import _row
    from scoring.score.tables import cell_stats
    from scoring.score.verdicts import score_qa

    bench = Benchmark.open(paper)
    o06 = [i for i in load(paper, "qa.jsonl") if i["relation"] == "O06"]
    rows = []
    for inst in o06:
        right = score_qa(inst, f"Answer: {inst['answer']}", form="open", modality="geojson")
        refused = score_qa(inst, "Answer: cannot be determined", form="open", modality="geojson")
        assert right.verdict == "correct" and refused.verdict == "wrong", inst["id"]
        letter = score_qa(inst, f"Answer: {inst['correct_choice']}", form="mcq", modality="geojson")
        assert letter.verdict == "correct"
        for modality in ("geojson", "image"):
            rec = {"task": "qa", "form": "open", "modality": modality, "status": "ok"}
            rows.append(_row(bench, inst, {**rec, "text": f"Answer: {inst['answer']}"}, "m", tmp_path))
    assert all(r["verdict"] == "correct" for r in rows)
    # one verdict per reply: answerable as the verdicts judge it (a refusal is `wrong`, so a false
    # refusal in the refusal measures too); the paper's information-sufficient score drops O06 by
    # its own rule (Table 1's info_sufficient_paper), not through the rows' `answerable`
    assert [r["answerable"] for r in rows] == [True, True] * len(o06)
    cell = cell_stats(rows)
    assert cell["accuracy"] == 1.0 and cell["n"] == 2 * len(o06)
    assert cell["n_answerable"] == 2 * len(o06)
