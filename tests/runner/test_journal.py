import json

from scoring.runner.journal import Journal, final_predictions, read_records, request_key

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


def test_request_key_covers_every_component():
    k = request_key(**BASE)
    assert k == request_key(**{**BASE, "base_url": "http://h/v1/"})
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
