"""The benchmark builder on the embedded Helsinki extract: recorded truth re-verified, edits
solvable but not pre-solved, determinism, bad input."""

import hashlib
import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest

from scoring.build.builder import build_benchmark
from scoring.constraints.edits import apply_edit
from scoring.constraints.facts import all_hold, check_constraint, check_fact, evaluate, same_value
from scoring.geometry.scene import Scene
from scoring.oracle import MEASURES
from scoring.paths import RESOURCES_DIR
from scoring.relations import CATALOGUE
from scoring.relations.base import REFUSAL, check_answer
from scoring.vocab import MODALITIES
from tests.conftest import REPO, VENV_BIN, shared_path

SCHEMA = json.loads((RESOURCES_DIR / "schema" / "instance.schema.json").read_text())


def load(bench: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (bench / name).read_text().splitlines()]


@pytest.fixture(scope="module")
def qa(helsinki_bench):
    # answerable items (the unanswerable variants: tests/relations/test_unanswerable.py)
    return [i for i in load(helsinki_bench, "qa.jsonl") if "unanswerable" not in i]


@pytest.fixture(scope="module")
def edit(helsinki_bench):
    return [i for i in load(helsinki_bench, "edit.jsonl") if "unanswerable" not in i]


def test_manifest_counts_and_hashes(helsinki_bench, qa, edit):
    m = json.loads((helsinki_bench / "manifest.json").read_text())
    assert m["city"] == "helsinki" and m["crs"]["epsg"] == 32635
    extra = m["unanswerable"]  # the variants come in addition (tests/relations/test_unanswerable.py)
    assert m["counts"]["qa"] == len(qa) + extra["qa"] and m["counts"]["edit"] == len(edit) + extra["edit"]
    assert set(m["counts"]["per_relation"]) == set(CATALOGUE)
    # The paper's default: 25 per relation and task; shortfalls are stated, never silent.
    for code, c in m["counts"]["per_relation"].items():
        for task in ("qa", "edit"):
            if c[task] < 25:
                assert any(s["relation"] == code and s["task"] == task for s in m["shortfalls"])
    assert len(qa) >= 650 and len(edit) >= 650
    for name, digest in m["files"].items():
        assert hashlib.sha256((helsinki_bench / name).read_bytes()).hexdigest() == digest
    for key in ("geos", "shapely", "pyproj", "gdal"):
        assert m["versions"][key]
    assert m["source"]["sha256"] and "OpenStreetMap" in m["source"]["attribution"]


def test_every_instance_matches_the_schema(qa, edit):
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for inst in qa + edit:
        errors = list(validator.iter_errors(inst))
        assert not errors, (inst["id"], errors[0].message)


def test_scene_is_task_crs_on_a_cm_grid(qa):
    for inst in qa[::7]:
        assert inst["scene"]["crs"]["properties"]["name"] == "urn:ogc:def:crs:EPSG::32635"
        ids = [f["id"] for f in inst["scene"]["features"]]
        assert ids == [f"F{i}" for i in range(len(ids))]
        text = json.dumps(inst["scene"]["features"])
        for num in __import__("re").findall(r"-?\d+\.\d+", text):
            assert len(num.split(".")[1]) <= 2, num
        # Provenance stays out of what a model reads.
        assert "osm" not in text and "way/" not in text


def test_every_qa_fact_reverifies_from_the_scene(qa):
    checked = 0
    for inst in qa:
        scene = Scene.from_geojson(inst["scene"])
        for fact in inst["facts"]:
            if fact["measure"] == "vertical_level":
                continue  # an attribute fact, checked in test_unanswerable_layer_hierarchy
            ok, value = check_fact(scene, fact)
            assert ok, (inst["id"], fact, value)
            checked += 1
    assert checked > 2000


def test_qa_answers_follow_from_the_oracle(qa):
    """The recorded answer is what the oracle says, and the MCQ option marked correct is it."""
    for inst in qa:
        rel = CATALOGUE[inst["relation"]]
        assert rel.family == inst["family"]
        choices = inst["choices"]
        assert len(set(choices)) == 4
        correct = choices["ABCD".index(inst["correct_choice"])]
        answer = inst["answer"]
        if inst["answer_type"] in ("distance", "perimeter", "density", "bearing"):
            num = float(re.match(r"[\d .]+", correct).group().replace(" ", ""))
            decimals = 3 if inst["answer_type"] == "density" else 1
            assert abs(num - answer) <= 0.6 * 10**-decimals, (inst["id"], correct, answer)
        elif inst["answer_type"] == "ordering":
            assert correct == ", ".join(answer)
        else:
            assert correct == str(answer)
        # The relation's own answer checker accepts the reference and rejects the distractors.
        assert rel.check_answer(inst, answer)
        if inst["answer_type"] in ("feature_id", "direction4", "direction8", "relative_direction", "axis"):
            for c in choices:
                if c != correct:
                    assert not rel.check_answer(inst, c)


def test_feature_id_answers_are_the_single_true_fact(qa):
    for inst in qa:
        if inst["family"] != "topology":
            continue
        truths = [f["args"][0] for f in inst["facts"] if f["measure"] != "de9im" and f["value"] is True]
        assert truths == [inst["answer"]], inst["id"]


def test_numeric_answers_have_tolerances(qa):
    for inst in qa:
        if inst["answer_type"] in ("distance", "perimeter"):
            assert inst["tolerance"] == 1.0 and inst["unit"] == "m"
            assert check_answer(inst["answer_type"], inst["answer"], inst["answer"] + 0.9)
            assert not check_answer(inst["answer_type"], inst["answer"], inst["answer"] + 1.1)
        if inst["answer_type"] == "bearing":
            assert inst["tolerance"] == 1.0
            assert check_answer("bearing", inst["answer"], (inst["answer"] + 359.2) % 360)
        if inst["answer_type"] == "density":
            assert inst["tolerance"] == 0.001


def test_direction_margins_recorded(qa):
    for inst in qa:
        if inst["relation"] == "D01":
            assert inst["margin"]["sector_edge_deg"] >= 5
        if inst["relation"] == "D02":
            assert inst["margin"]["sector_edge_deg"] >= 4
        if inst["relation"] == "M15":
            assert inst["margin"]["runner_up_gap_m"] >= 2


def test_unanswerable_layer_hierarchy(qa):
    o06 = [i for i in qa if i["relation"] == "O06"]
    unanswerable = [i for i in o06 if not i["answerable"]["geojson"]]
    answerable = [i for i in o06 if i["answerable"]["geojson"]]
    assert unanswerable and answerable
    for inst in unanswerable:
        assert inst["answer"] == REFUSAL and REFUSAL in inst["choices"]
        assert set(inst["answerable"]) == set(MODALITIES) and not any(inst["answerable"].values())
        for f in inst["scene"]["features"]:
            assert not {"layer", "bridge", "tunnel"} & set(f["properties"])
        assert inst["information"]["withheld"] == ["layer", "bridge", "tunnel"]
    for inst in answerable:
        levels = {f["args"][0]: f["value"] for f in inst["facts"] if f["measure"] == "vertical_level"}
        assert inst["answer"] == max(levels, key=levels.get) and len(set(levels.values())) == 2


def test_reference_edits_satisfy_constraints_the_initial_scene_violates(edit):
    for inst in edit:
        scene = Scene.from_geojson(inst["scene"])
        assert inst["target"] == "F0"
        assert not all_hold(scene, inst["constraints"], initial=scene), inst["id"]
        res = apply_edit(scene, "F0", inst["reference_edit"], tuple(inst["allowed_operations"]))
        assert res.changed
        results = [check_constraint(res.scene, c, initial=scene) for c in inst["constraints"]]
        assert all(ok for ok, _ in results), (inst["id"], results)
        # Only F0 changed.
        for f in scene.features[1:]:
            assert res.scene.geom(f.id).equals_exact(f.geom, 0)
        # Recorded facts: initial values on the initial scene, reference values after the edit.
        for fact in inst["facts"]:
            sc = scene if fact["state"] == "initial" else res.scene
            value = evaluate(sc, fact["measure"], fact["args"], fact["params"], initial=scene)
            assert same_value(value, fact["value"], MEASURES[fact["measure"]].kind), (inst["id"], fact)


def test_constructed_features_are_recorded(qa):
    t01 = [i for i in qa if i["relation"] == "T01"]
    for inst in t01:
        origins = {k: v["origin"] for k, v in inst["provenance"]["features"].items()}
        assert origins["F0"] == "observed"
        answer = inst["provenance"]["features"][inst["answer"]]
        assert answer["origin"] == "constructed" and "topologically equal" in answer["construction"]


def test_same_seed_same_bytes_other_seed_differs(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    kw = {"n_qa": 3, "n_edit": 2, "relations": ["T04", "D02", "M18", "O06"], "progress": False}
    build_benchmark(None, a, seed=7, jobs=2, **kw)
    build_benchmark(None, b, seed=7, jobs=1, **kw)
    build_benchmark(None, c, seed=8, jobs=2, **kw)
    for name in ("qa.jsonl", "edit.jsonl", "context.geojsonl"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert (a / "qa.jsonl").read_bytes() != (c / "qa.jsonl").read_bytes()


def run_cli(*args, cwd=None):
    return subprocess.run(
        [str(VENV_BIN / "spatialgap"), *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


TINY_OSM = (
    "<?xml version='1.0'?><osm version='0.6'><node id='1' lat='60.1' lon='24.9'>"
    "<tag k='amenity' v='cafe'/></node></osm>"
)


@pytest.mark.parametrize(
    "name,content,needle",
    [
        ("missing.osm.pbf", None, "no such file"),
        ("empty.osm.pbf", "", "empty file"),
        ("notes.osm", "hello, not OSM", "not an OpenStreetMap"),
        ("tiny.osm", TINY_OSM, "too small"),
    ],
)
def test_bad_input_one_line_error_nothing_left(tmp_path, name, content, needle):
    src = tmp_path / name
    if content is not None:
        src.write_text(content)
    out = tmp_path / "bench"
    r = run_cli("build", "--osm", str(src), "--out", str(out), "--no-progress")
    assert r.returncode != 0
    err = [line for line in r.stderr.strip().splitlines() if not line.startswith(("Warning", "ERROR"))]
    assert len(err) == 1 and needle in err[0] and "Traceback" not in r.stderr, r.stderr
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if ".partial-" in p.name]


def test_unwritable_output_and_existing_directory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run_cli("build", "--out", str(blocker / "bench"), "--qa", "1", "--edit", "0", "--no-progress")
    assert r.returncode != 0 and "error" in r.stderr and "Traceback" not in r.stderr
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "keep.txt").write_text("precious")
    r = run_cli("build", "--out", str(existing), "--qa", "1", "--edit", "0", "--no-progress")
    assert r.returncode != 0 and "--force" in r.stderr
    assert (existing / "keep.txt").read_text() == "precious"


def test_relation_reference_is_generated_from_the_catalogue():
    r = run_cli("reference", "--check", "--out", str(REPO / "resources" / "relations.md"))
    assert r.returncode == 0, r.stdout
    text = (REPO / "resources" / "relations.md").read_text()
    for code, rel in CATALOGUE.items():
        assert f"### {code} {rel.name}" in text


def test_scoring_imports_without_qgis(tmp_path):
    code = (
        "import sys; sys.modules['qgis'] = None; sys.modules['qgis.core'] = None\n"
        "import scoring.build.builder, scoring.oracle, scoring.constraints.facts\n"
        "import scoring.relations, scoring.cli\n"
        "print('ok')"
    )
    r = subprocess.run([str(VENV_BIN / "python"), "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


RAW_CITIES = [
    "stockholm_norrmalm.osm",
    "hongkong_tsimshatsui.osm",
    "nairobi_kibera.osm",
    "paris_marais_roads.osm.pbf",
    "london_city.osm.pbf",
    "baltimore.osm.pbf",
]


@pytest.mark.shared
@pytest.mark.parametrize("name", RAW_CITIES)
def test_builds_every_shared_city(tmp_path, name):
    src = shared_path("osm", name)
    out = tmp_path / "bench"
    m = build_benchmark(str(src), out, n_qa=2, n_edit=1, jobs=2, progress=False)
    assert m["counts"]["qa"] > 0 and (out / "manifest.json").exists()
    built = {(r["relation"], r["task"]) for r in m["build_report"] if r["built"]}
    missing = {(r["relation"], r["task"]) for r in m["build_report"] if r["built"] < r["requested"]}
    # Every shortfall is stated with a reason.
    stated = {(s["relation"], s["task"]) for s in m["shortfalls"]}
    assert missing == stated
    assert all(s["shortfall"] for s in m["shortfalls"])
    if name.startswith("paris"):
        # Paris has (almost) no buildings: relations that need them say so.
        assert any(s["relation"] in ("T09", "M02", "T11") for s in m["shortfalls"])
        assert ("O08", "qa") in built


# ---------------------------------------------------------------- water in the map context


def _sea_checks(ctx: list[dict]):
    """The sea polygons of a context file and the buildings whose inside point is in them."""
    import shapely
    from shapely.geometry import shape

    sea = [f for f in ctx if f["properties"]["pool"] == "water" and f["properties"].get("water") == "sea"]
    union = shapely.union_all([shape(f["geometry"]) for f in sea]) if sea else None
    buildings = [shape(f["geometry"]) for f in ctx if f["properties"]["pool"] == "building"]
    flooded = [b for b in buildings if union is not None and union.contains(b.representative_point())]
    return sea, union, buildings, flooded


def test_water_context_is_written_and_stays_out_of_the_tasks(helsinki_bench, qa, edit):
    """Helsinki: the Kaisaniemenlahti bay (mapped only by natural=coastline) and the lakes are
    context "water"; the sea covers no more than the boats and pavilions moored on it; no task
    feature comes from a water tag or the derived sea."""
    ctx = load(helsinki_bench, "context.geojsonl")
    water = [f for f in ctx if f["properties"]["pool"] == "water"]
    assert any(f["properties"].get("natural") == "water" for f in water)
    sea, union, buildings, flooded = _sea_checks(ctx)
    assert sea and union.area > 50_000
    assert len(flooded) <= 3 and len(buildings) > 300
    from shapely.geometry import shape

    roads = [shape(f["geometry"]) for f in ctx if f["properties"]["pool"] == "road"]
    assert sum(r.intersection(union).length for r in roads) < 0.01 * sum(r.length for r in roads)
    # a basin that is also a task-pool area is written once, as water
    areas = {f["id"] for f in ctx if f["properties"]["pool"] == "area"}
    assert not areas & {f["id"] for f in water}
    # tasks never see water: no sea, no natural=water / waterway polygon (one with a landuse
    # tag, e.g. a basin or reservoir, was a task area before water was drawn and stays one)
    not_task = {f["id"] for f in water if "landuse" not in f["properties"]}
    for inst in qa + edit:
        for prov in inst["provenance"]["features"].values():
            assert prov.get("osm") not in not_task, inst["id"]
            assert not str(prov.get("osm", "")).startswith("sea/"), inst["id"]
        for f in inst["scene"]["features"]:
            assert not {"natural", "waterway", "water"} & set(f["properties"]), inst["id"]


def test_task_pools_do_not_depend_on_the_water_context(monkeypatch):
    """The same extract read with the water collection switched off gives the same task pools."""
    import shapely

    import scoring.extract.assemble as extract  # the records' roles and the pools are made there
    from scoring.extract.osm import load_pools

    with_water = load_pools(None)
    assert with_water.context["water"] and set(with_water.features) == set(extract.POOL_KINDS)
    monkeypatch.setattr(extract, "WATER_TAGS", ())
    monkeypatch.setattr(extract, "sea_from_coastline", lambda *a, **k: [])
    without = load_pools(None)
    assert without.context["water"] == []
    assert with_water.counts() == without.counts()
    assert with_water.thresholds.as_dict() == without.thresholds.as_dict()
    for kind in extract.POOL_KINDS:
        a, b = with_water.features[kind], without.features[kind]
        assert [f.uid for f in a] == [f.uid for f in b]
        assert [f.props for f in a] == [f.props for f in b]
        assert all(shapely.equals_exact(f.geom, g.geom, 0) for f, g in zip(a, b, strict=False))


@pytest.mark.shared
def test_hong_kong_harbour_is_sea_and_the_peninsula_is_not():
    from shapely.geometry import Point

    from scoring.extract.osm import load_pools

    pools = load_pools(shared_path("osm", "hongkong_tsimshatsui.osm"))
    sea = [f for f in pools.context["water"] if f.props.get("water") == "sea"]
    assert sea
    import shapely

    union = shapely.union_all([f.geom for f in sea])
    assert union.contains(Point(826250, 2469200))  # Victoria Harbour, west of Canton Road
    assert not union.contains(Point(827000, 2469400))  # Tsim Sha Tsui, inland
    inside = [f for f in pools.features["building"] if union.contains(f.geom.representative_point())]
    assert inside == []


def _synthetic_pools():
    """A 1 km box: buildings and roads in the west half (land), a coastline running north
    along x = 600 (land on its left, i.e. west), nothing east of it."""
    from shapely.geometry import LineString
    from shapely.geometry import box as sbox

    from scoring.extract.pools import PoolFeature

    buildings = [
        PoolFeature(
            f"way/{k}",
            "building",
            sbox(50 + 40 * (k % 10), 50 + 40 * (k // 10), 70 + 40 * (k % 10), 70 + 40 * (k // 10)),
            {},
        )
        for k in range(200)
    ]
    roads = [
        PoolFeature(f"way/{1000 + k}", "road", LineString([(20, 45 + 40 * k), (560, 45 + 40 * k)]), {})
        for k in range(20)
    ]
    corner = PoolFeature("node/1", "poi", __import__("shapely").Point(1000, 1000), {})
    return {"road": roads, "building": buildings, "area": [], "poi": [corner]}


def test_sea_is_on_the_right_of_the_coastline_and_never_floods_the_land():
    from shapely.geometry import LineString, Point

    from scoring.extract.water import sea_from_coastline as _sea_from_coastline

    pools = _synthetic_pools()
    north = LineString([(600, -50), (600, 300), (620, 700), (600, 1050)])  # water east
    sea = _sea_from_coastline([north], [], pools)
    assert len(sea) == 1 and sea[0].props["water"] == "sea"
    assert sea[0].geom.contains(Point(800, 500)) and not sea[0].geom.contains(Point(300, 500))
    # the same line drawn the other way round would put the sea over the buildings: refused
    assert _sea_from_coastline([LineString(list(north.coords)[::-1])], [], pools) == []
    # a coastline ending in the middle of the extract divides nothing: no sea
    assert _sea_from_coastline([LineString([(600, -50), (600, 400)])], [], pools) == []
    # cut by the extract 30 m short of its edge: carried on to the edge
    short = LineString([(600, 30), (600, 300), (620, 700), (600, 970)])
    sea = _sea_from_coastline([short], [], pools)
    assert sea and sea[0].geom.contains(Point(800, 500))
    # two pieces of one shore with a missing way between them are joined
    parts = [LineString([(600, -50), (600, 400)]), LineString([(610, 480), (600, 1050)])]
    sea = _sea_from_coastline(parts, [], pools)
    assert sea and sea[0].geom.contains(Point(800, 440)) and not sea[0].geom.contains(Point(300, 440))


def test_helsinki_map_by_the_bay_shows_water_and_says_so(helsinki_bench, qa):
    """A map of a scene on the Kaisaniemenlahti shore draws the sea and lists "water" in its
    legend; a map far from any water does not."""
    import shapely
    from shapely.geometry import shape

    from scoring.render import ContextIndex, render_map

    ctx = load(helsinki_bench, "context.geojsonl")
    water = shapely.union_all([shape(f["geometry"]) for f in ctx if f["properties"]["pool"] == "water"])
    index = ContextIndex.from_file(helsinki_bench / "context.geojsonl", 32635)

    def scene_of(inst):
        return shapely.union_all([shape(f["geometry"]) for f in inst["scene"]["features"]])

    near = next(i for i in qa if 0 < scene_of(i).distance(water) < 20)
    far = next(i for i in qa if scene_of(i).distance(water) > 400)
    _, rec = render_map(near, index)
    assert "water" in rec["legend"]["context"] and rec["context_counts"]["water"] >= 1
    _, rec = render_map(far, index)
    assert "water" not in rec["legend"]["context"] and rec["context_counts"]["water"] == 0
