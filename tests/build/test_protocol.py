"""`spatialgap build --protocol paper` on the embedded Helsinki extract: the manifest and every
instance say which protocol; O06 attributes on the map only; numeric options as adjacent
intervals; topology also asked as a DE-9IM class; our own protocol unchanged by default."""

import json
from pathlib import Path

import jsonschema
import pytest
from shapely.geometry import shape

from scoring.build.builder import build_benchmark
from scoring.errors import InputError
from scoring.constraints.framing import MAP_FRAME
from scoring.oracle import vertical_level
from scoring.paths import RESOURCES_DIR
from scoring.relations.reference import render as render_reference
from scoring.relations.base import TOLERANCES
from scoring.relations.paper import (
    DEVIATIONS,
    INTERVAL,
    LAYER_ATTRS,
    Q_TOPOLOGY_CLASS,
    TOPOLOGY_CLASSES,
    exact_topology_class,
    interval_contains,
)
from scoring.vocab import AnswerType

SCHEMA = json.loads((RESOURCES_DIR / "schema" / "instance.schema.json").read_text())
RELATIONS = ["O06", "T02", "T03", "T04", "T06", "M01", "M12", "M18", "D04", "D01"]


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
        assert inst["answerable"]["geojson"] is False
        assert inst["answerable"]["image"] is True and inst["answerable"]["together"] is True
        assert inst["information"]["attributes"] == list(LAYER_ATTRS)
        assert inst["information"]["withheld_from"] == {"geojson": list(LAYER_ATTRS)}


def _bounds(choice: str) -> tuple[float, float]:
    slots = INTERVAL.read(choice)
    assert slots is not None, choice
    return float(slots["lo"]), float(slots["hi"])


def test_numeric_options_are_adjacent_intervals(paper):
    numeric = [
        i
        for i in load(paper, "qa.jsonl")
        if i["answer_type"] in ("distance", "perimeter", "density", "bearing")
    ]
    assert {i["answer_type"] for i in numeric} == {"distance", "perimeter", "density", "bearing"}
    for inst in numeric:
        bounds = [_bounds(c) for c in inst["choices"]]
        circular = inst["answer_type"] == "bearing"
        for (_, hi), (lo, _) in zip(bounds, bounds[1:], strict=False):
            assert (hi % 360 == lo % 360) if circular else hi == lo, inst["choices"]
        width = (bounds[0][1] - bounds[0][0]) % 360 if circular else bounds[0][1] - bounds[0][0]
        holds = [interval_contains(c, inst["answer"], circular) for c in inst["choices"]]
        assert holds.count(True) == 1 and "ABCD"[holds.index(True)] == inst["correct_choice"]
        # no tolerance-sized doubt about which interval: the answer sits a quarter width inside
        edge = inst["margin"]["interval_edge"]
        assert edge >= width / 4 - 1e-6
        assert edge >= 2 * TOLERANCES[AnswerType(inst["answer_type"])]


def test_topology_asked_as_a_class_on_odd_slots(paper):
    topo = [i for i in load(paper, "qa.jsonl") if i["family"] == "topology"]
    classes = [i for i in topo if i["answer_type"] == "topology_class"]
    assert classes and all(int(i["id"][-3:]) % 2 == 1 for i in classes)
    assert all(i["answer_type"] == "feature_id" for i in topo if int(i["id"][-3:]) % 2 == 0)
    assert len(classes) >= 0.8 * sum(1 for i in topo if int(i["id"][-3:]) % 2 == 1)
    for inst in classes:
        slots = Q_TOPOLOGY_CLASS.read(inst["question"])
        assert slots is not None
        geoms = {f["id"]: shape(f["geometry"]) for f in inst["scene"]["features"]}
        assert inst["answer"] == exact_topology_class(geoms[slots["b"]], geoms[slots["a"]])
        assert inst["answer"] in TOPOLOGY_CLASSES and set(inst["choices"]) <= set(TOPOLOGY_CLASSES)
        assert inst["choices"]["ABCD".index(inst["correct_choice"])] == inst["answer"]


def test_unknown_protocol_is_a_one_line_error(tmp_path):
    with pytest.raises(InputError, match="unknown protocol 'journal'"):
        build_benchmark(None, tmp_path / "x", protocol="journal", progress=False)


def test_relation_reference_lists_each_deviation_with_its_reason():
    text = render_reference()
    assert "## Protocols: `spatialgap` (default) and `paper`" in text
    for topic, ours, why in DEVIATIONS:
        assert f"| {topic} | {ours} | {why} |" in text
    assert (RESOURCES_DIR / "relations.md").read_text() == text


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
