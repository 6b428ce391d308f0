"""No response, however odd (huge, nested, NaN, invalid geometry, random text), crashes the
scorer: every call returns one of the verdicts."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.geometry.georef import PixelTransform
from scoring.score import VERDICTS, score_edit, score_qa

FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**30), 10**30),
    st.sampled_from([0, -0.0, 1e308, 385000.0, 6672000.0]),
)
SCALARS = st.one_of(st.none(), st.booleans(), FLOATS, st.text(max_size=20))
JSONISH = st.recursive(
    SCALARS,
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=8), c, max_size=4)),
    max_leaves=30,
)
OP = st.fixed_dictionaries(
    {"op": st.sampled_from(["translate", "rotate", "scale", "set_attribute", "x"])},
    optional={
        "dx": FLOATS,
        "dy": FLOATS,
        "degrees_clockwise": FLOATS,
        "factor": FLOATS,
        "origin": st.one_of(st.just("centroid"), st.lists(FLOATS, max_size=3)),
        "name": st.text(max_size=6),
        "value": SCALARS,
    },
)
POS = st.lists(FLOATS, min_size=2, max_size=2)
GEOM = st.one_of(
    st.builds(lambda p: {"type": "Point", "coordinates": p}, POS),
    st.builds(lambda r: {"type": "LineString", "coordinates": r}, st.lists(POS, max_size=5)),
    st.builds(lambda r: {"type": "Polygon", "coordinates": [r]}, st.lists(POS, max_size=6)),
    st.builds(
        lambda t, c: {"type": t, "coordinates": c},
        st.sampled_from(["MultiPolygon", "Polygon", "Blob"]),
        JSONISH,
    ),
)


def _dump(obj) -> str:
    return json.dumps(obj, allow_nan=True, default=str)


EDIT_TEXT = st.one_of(
    st.text(max_size=300),
    st.builds(lambda ops: _dump({"operations": ops}), st.lists(OP, max_size=5)),
    st.builds(lambda g: _dump({"geometry": g}), GEOM),
    st.builds(lambda g: _dump({"pixel_geometry": g}), GEOM),
    st.builds(lambda j: "```json\n" + _dump({"operations": j}) + "\n```", JSONISH),
    st.builds(lambda n: "{" * n + '"operations": []' + "}" * n, st.integers(1, 3000)),
    st.builds(lambda n: "[" * n, st.integers(1, 50_000)),
    st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=5), st.integers(1, 60_000)),
)
QA_TEXT = st.one_of(
    st.text(max_size=400),
    st.builds(_dump, JSONISH),
    st.builds(lambda s, n: "Answer: " + s * n, st.text(min_size=1, max_size=4), st.integers(1, 50_000)),
    st.builds(lambda a, b: f"<think>{a}</think>Answer: {b}", st.text(max_size=50), st.text(max_size=30)),
)

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))


@SETTINGS
@given(
    text=QA_TEXT,
    pick=st.integers(0, 10_000),
    form=st.sampled_from(["open", "mcq"]),
    modality=st.sampled_from(["geojson", "image", "together"]),
)
def test_qa_never_crashes(qa, text, pick, form, modality):
    inst = list(qa.values())[pick % len(qa)]
    v = score_qa(inst, text, form=form, modality=modality)
    assert v.verdict in VERDICTS and isinstance(v.reason, str)
    json.dumps(v.as_dict(), allow_nan=False)


@SETTINGS
@given(
    text=EDIT_TEXT, pick=st.integers(0, 10_000), modality=st.sampled_from(["geojson", "together", "image"])
)
def test_edit_never_crashes(small_bench, edits, text, pick, modality):
    inst = list(edits.values())[pick % len(edits)]
    pt = (
        PixelTransform.from_sidecar(small_bench / "maps" / f"{inst['id']}.json")
        if modality == "image"
        else None
    )
    v = score_edit(inst, text, modality=modality, pixel_transform=pt)
    assert v.verdict in VERDICTS and isinstance(v.reason, str)
    json.dumps(v.as_dict(), allow_nan=False)
    if v.verdict == "correct":
        assert v.constraints and all(c["passed"] for c in v.constraints)


@SETTINGS
@given(
    record=st.fixed_dictionaries(
        {},
        optional={
            "task": st.sampled_from(["qa", "edit", None]),
            "form": st.sampled_from(["open", "mcq", None]),
            "modality": st.sampled_from(["geojson", "together", None]),
            "status": st.sampled_from(["ok", "error", None, "weird"]),
            "text": st.one_of(st.none(), st.text(max_size=50)),
            "error": st.one_of(st.none(), st.text(max_size=10), JSONISH),
        },
    ),
    pick=st.integers(0, 10_000),
)
def test_any_journal_record_gets_a_verdict(small_bench, qa, edits, record, pick):
    from scoring.score import score_prediction

    pool = list(qa.values()) + list(edits.values())
    inst = pool[pick % len(pool)]
    v = score_prediction(inst, record, small_bench)
    assert v.verdict in VERDICTS
    if record.get("status") != "ok":
        assert v.verdict == "error"


BROKEN = [
    "",
    "{",
    '{"operations": [{"op": "translate", "dx": NaN, "dy": 1}]}',
    json.dumps({"geometry": {"type": "GeometryCollection", "geometries": [{"type": "GeometryCollection"}]}}),
    '{"geometry": {"type": "Point", "coordinates": [385000, 6672000]}}',
    "<think>{" * 50,
    "x" * 300_000,
]


def test_score_completes_over_broken_edit_replies_and_names_each_reason(small_bench, tmp_path):
    """A real run of the `chance` agent whose replies are then broken on purpose: `spatialgap score`
    completes, every sample has a verdict with a reason, and nothing is an internal error."""
    from scoring.cli import main
    from scoring.runner.agents import start_server

    server, _ = start_server("chance")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        run = tmp_path / "run"
        argv = ["run", "--bench", str(small_bench), "--endpoint", url, "--model", "chance"]
        assert (
            main([*argv, "--modality", "geojson", "--task", "edit", "--out", str(run), "--no-progress"]) == 0
        )
    finally:
        server.shutdown()
    journal = run / "predictions.jsonl"
    records = [json.loads(x) for x in journal.read_text().splitlines()]
    for i, rec in enumerate(records):
        rec["text"] = BROKEN[i % len(BROKEN)]
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "results"
    assert main(["score", "--bench", str(small_bench), "--run", str(run), "--out", str(out)]) == 0
    rows = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    assert rows and all(r["verdict"] in VERDICTS and r["reason"] for r in rows)
    assert not [r for r in rows if r["reason"].startswith("internal error")]
    summary = json.loads((out / "summary.json").read_text())
    assert summary.get("internal_errors", 0) == 0
