"""`spatialgap evaluate` over three real cities with the built-in agents and a second server
configured as an external, text-only model: one command, one combined report, resumed on re-run."""

import json

import pytest

from tests.conftest import shared_path
from tests.evaluate.sweep_helpers import ServedAgent, models_toml, run_evaluate, verdict_rows

CITIES = {
    "baltimore": "baltimore.osm.pbf",
    "london": "london_city.osm.pbf",
    "paris": "paris_marais_roads.osm.pbf",
}
RELATIONS = ["M01", "D04", "T11"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    osm = shared_path("osm")
    root = tmp_path_factory.mktemp("sweep")
    cities = root / "cities.toml"
    cities.write_text(
        "".join(
            f'[cities.{name}]\nosm = "{osm / f}"\nqa = 2\nedit = 2\nrelations = {json.dumps(RELATIONS)}\n\n'
            for name, f in CITIES.items()
        )
    )
    external = ServedAgent("centroid")
    try:
        config = models_toml(
            root / "models.toml",
            {
                "careless": {
                    "kind": "openai",
                    "base_url": external.base_url,
                    "model": "centroid",
                    "modalities": ["geojson"],
                    "concurrency": 4,
                    "omit": ["seed"],
                }
            },
        )
        args = ["--cities", str(cities), "--config", str(config), "--agents", "tools,chance"]
        first = run_evaluate(root / "out", *args)
        second = run_evaluate(root / "out", *args)
    finally:
        external.stop()
    return root / "out", first, second


def test_one_command_runs_every_city_model_and_modality(sweep):
    out, first, _ = sweep
    assert first.returncode == 0, first.stderr[-3000:]
    rec = json.loads((out / "evaluate.json").read_text())
    assert [c["name"] for c in rec["cities"]] == list(CITIES)
    seen = set()
    for city in CITIES:
        for r in verdict_rows(out / city / "results"):
            seen.add((city, r["model"], r["modality"], r["task"]))
    expected = {
        (c, m, mod, t)
        for c in CITIES
        for m, mods in {
            "tools": ("geojson", "together"),
            "chance": ("geojson", "image", "together"),
            "careless": ("geojson",),
        }.items()
        for mod in mods
        for t in ("qa", "edit")
    }
    missing = expected - seen
    # a city may lack what a relation needs (Paris has no buildings): only whole tasks may be absent
    assert all(c == "paris" for c, *_ in missing), missing
    assert {m for _, m, _, _ in seen} == {"tools", "chance", "careless"}
    assert (out / "report.html").stat().st_size > 10_000
    assert {"participant": "careless", "modality": "image"} in rec["not_run"]


def test_summary_screen_says_not_run_never_zero(sweep):
    _, first, _ = sweep
    careless = next(line for line in first.stdout.splitlines() if line.startswith("careless"))
    # image open, mcq, edit raster-tolerant, edit strict CSR; together open, mcq, edit strict CSR
    assert careless.count("not run") == 7 and " 0.0 %" not in careless
    tools = next(line for line in first.stdout.splitlines() if line.startswith("tools"))
    assert "100.0 %" in tools  # the tool-using agent answers every GeoJSON question
    assert "report: " in first.stdout and "report.html" in first.stdout


def test_second_run_reuses_benchmarks_and_journals(sweep):
    out, _, second = sweep
    assert second.returncode == 0, second.stderr[-3000:]
    assert second.stderr.count("reusing benchmark") == len(CITIES)
    rec = json.loads((out / "evaluate.json").read_text())
    assert rec["runs"] and all(r["sent"] == 0 and r["status"] == "complete" for r in rec["runs"])
