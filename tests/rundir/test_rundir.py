"""The run directory: journal (append, torn lines, cache), naming, reuse, loading, and answers
recorded outside the runner (the human baseline)."""

import json

import pytest

from scoring.errors import InputError, SpatialGapError
from scoring.formats.benchmark import Benchmark
from scoring.formats.journal import RequestIdentity
from scoring.formats.rundir import (
    PREDICTIONS,
    RUN_MANIFEST,
    Journal,
    final_predictions,
    find_run_dir,
    instance_hash,
    load_run,
    read_records,
    record_answer,
    run_dir_name,
)

BASE = dict(
    model="m",
    kind="openai",
    base_url="http://h/v1",
    generation={"temperature": 0},
    template="qa-open-geojson",
    template_version="1",
    template_sha256="t",
    instance_sha256="i",
    image_sha256=None,
    modality="geojson",
    form="open",
    attempt_kind="initial",
)


def request_key(**fields):
    return RequestIdentity(**fields).key


def test_request_key_covers_every_component():
    k = request_key(**BASE)
    assert k == request_key(**{**BASE, "base_url": "http://h/v1/"})
    assert k == request_key(**{**BASE, "sample_index": 0})  # a run of one sample: keys as before
    for field, value in [
        ("model", "m2"),
        ("kind", "ollama"),
        ("base_url", "http://g/v1"),
        ("generation", {"temperature": 1}),
        ("template", "x"),
        ("template_version", "2"),
        ("template_sha256", "u"),
        ("instance_sha256", "j"),
        ("image_sha256", "p"),
        ("modality", "image"),
        ("form", "mcq"),
        ("attempt_kind", "corrective"),
        ("previous_reply_sha256", "r"),
        ("sample_index", 1),
    ]:
        assert request_key(**{**BASE, field: value}) != k, field


def test_torn_last_line_is_dropped_and_repaired(tmp_path):
    p = tmp_path / "predictions.jsonl"
    with Journal(p) as j:
        j.append(
            {"key": "a", "status": "ok", "sample": "x|open", "final": True, "usage": {"n": float("nan")}}
        )
        j.append({"key": "b", "status": "error", "sample": "y|open", "final": True})
    with open(p, "ab") as fh:
        fh.write(b'{"key": "c", "status": "o')  # killed mid-write
    recs, corrupt, torn = read_records(p)
    assert [r["key"] for r in recs] == ["a", "b"] and torn is not None
    with Journal(p) as j:
        assert j.lookup("a")[0]["usage"] == {"n": None}
        assert j.lookup("b") == (None, None)  # errors are not cached
        j.append({"key": "b", "status": "ok", "sample": "y|open", "final": True})
    lines = p.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])
    assert len(lines) == 4
    best = final_predictions(p)
    assert best["y|open"]["status"] == "ok" and best["x|open"]["key"] == "a"


def test_complete_record_without_newline_is_kept(tmp_path):
    p = tmp_path / "j.jsonl"
    p.write_bytes(b'{"key": "a", "status": "ok"}\n{"key": "b", "status": "ok"}')
    with Journal(p) as j:
        assert j.lookup("b")[0] is not None
        j.append({"key": "c", "status": "ok"})
    assert [r["key"] for r in read_records(p)[0]] == ["a", "b", "c"]


def test_external_cache(tmp_path):
    a = tmp_path / "a.jsonl"
    with Journal(a) as j:
        j.append({"key": "k", "status": "ok", "text": "hi"})
    with Journal(tmp_path / "b.jsonl", extra_caches=[a]) as j:
        rec, src = j.lookup("k")
        assert src == "cache" and rec["text"] == "hi"


def test_request_keys_of_recorded_runs_stay_valid():
    # Fixed values: a change here makes every journaled request look new (no resume, no cache).
    assert instance_hash({"id": "x", "scene": {"name": "Töölö", "v": 1.5}}) == (
        "b64a4501ab453863ec2033e16364735a04ebbc16c68bb43bbc75927daabd5fe9"
    )
    assert request_key(**BASE) == "dc50d0b652e5e27696cd6947ce71dfb04f4e51e78f6115dd2df6f3997af78c71"


# ---- the directory -----------------------------------------------------------------------------
IDENT = {"kind": "openai", "base_url": "http://h/v1", "model": "m"}


def _bench(root):
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps({"city": "c", "crs": {"epsg": 3067}}))
    (root / "qa.jsonl").write_text(
        json.dumps({"id": "q1", "task": "qa", "relation": "M01", "scene": {}}) + "\n"
    )
    (root / "edit.jsonl").write_text(json.dumps({"id": "e1", "task": "edit", "scene": {}}) + "\n")
    return Benchmark.open(root)


def _run(path, model=IDENT, modality="geojson"):
    path.mkdir(parents=True)
    (path / RUN_MANIFEST).write_text(json.dumps({"model": {**model, "name": "x"}, "modality": modality}))


def test_run_dir_name_is_safe():
    assert run_dir_name("Qwen/2.5 VL:7B", "image", "qa") == "Qwen-2.5-VL-7B-image-qa"
    assert run_dir_name("///", "geojson", "edit") == "model-geojson-edit"


def test_find_run_dir_resumes_the_same_model_else_numbers_a_new_one(tmp_path):
    assert find_run_dir(tmp_path, "m", "geojson", "qa", IDENT) == tmp_path / "m-geojson-qa"
    _run(tmp_path / "m-geojson-qa", {**IDENT, "model": "other"})
    assert find_run_dir(tmp_path, "m", "geojson", "qa", IDENT) == tmp_path / "m-geojson-qa-2"
    _run(tmp_path / "m-geojson-qa-3")  # -2 is free, but -3 holds this model: resumed
    assert find_run_dir(tmp_path, "m", "geojson", "qa", IDENT) == tmp_path / "m-geojson-qa-3"
    # the same model in another modality is another run
    assert find_run_dir(tmp_path, "m", "image", "qa", IDENT) == tmp_path / "m-image-qa"
    # only kind, base_url and model decide; other settings may change between sessions
    assert find_run_dir(tmp_path, "m", "geojson", "qa", {**IDENT, "concurrency": 3}).name == "m-geojson-qa-3"


def test_find_run_dir_skips_an_unreadable_manifest(tmp_path):
    (tmp_path / "m-geojson-qa").mkdir()
    (tmp_path / "m-geojson-qa" / RUN_MANIFEST).write_text("{not json")
    assert find_run_dir(tmp_path, "m", "geojson", "qa", IDENT) == tmp_path / "m-geojson-qa-2"


def test_load_run_refuses_what_is_not_a_run_of_this_benchmark(tmp_path):
    with pytest.raises(InputError, match="not a run directory"):
        load_run(tmp_path)
    (tmp_path / RUN_MANIFEST).write_text(json.dumps({"benchmark_manifest_sha256": "a" * 64}))
    (tmp_path / PREDICTIONS).write_text(json.dumps({"key": "k", "sample": "q1|open", "final": True}) + "\n")
    manifest, finals = load_run(tmp_path, "a" * 64)
    assert list(finals) == ["q1|open"]
    with pytest.raises(InputError, match="another benchmark"):
        load_run(tmp_path, "b" * 64)


def test_record_answer_writes_a_run_the_scorer_reads(tmp_path):
    bench = _bench(tmp_path / "bench")
    qa, edit = bench.get("q1"), bench.get("e1")
    run = record_answer(bench, tmp_path / "runs", " ana ", qa, "Answer: 12", form="mcq")
    assert run == tmp_path / "runs" / "human-ana-geojson-qa"
    record_answer(bench, tmp_path / "runs", "ana", qa, "Answer: 13")
    manifest, finals = load_run(run, bench.sha256)
    assert manifest["forms"] == ["mcq", "open"] and manifest["model"]["name"] == "human-ana"
    assert manifest["task"] == "qa" and manifest["modality"] == "geojson"
    assert finals["q1|open"]["text"] == "Answer: 13" and finals["q1|mcq"]["status"] == "ok"
    assert finals["q1|open"]["relation"] == "M01" and finals["q1|open"]["attempt_kind"] == "human"
    # an edit has no form of its own; the run is per task
    erun = record_answer(bench, tmp_path / "runs", "ana", edit, '{"operations": []}', form="open")
    assert erun.name == "human-ana-geojson-edit" and "e1|edit" in load_run(erun)[1]


def test_record_answer_refuses_no_name_and_another_benchmark(tmp_path):
    bench = _bench(tmp_path / "bench")
    with pytest.raises(SpatialGapError, match="name"):
        record_answer(bench, tmp_path / "runs", "  ", bench.get("q1"), "x")
    assert not (tmp_path / "runs").exists()
    record_answer(bench, tmp_path / "runs", "ana", bench.get("q1"), "x")
    (tmp_path / "bench" / "manifest.json").write_text(json.dumps({"city": "changed"}))
    other = Benchmark.open(tmp_path / "bench")
    before = (tmp_path / "runs" / "human-ana-geojson-qa" / PREDICTIONS).read_bytes()
    with pytest.raises(SpatialGapError, match="another benchmark"):
        record_answer(other, tmp_path / "runs", "ana", other.get("q1"), "y")
    assert (tmp_path / "runs" / "human-ana-geojson-qa" / PREDICTIONS).read_bytes() == before
