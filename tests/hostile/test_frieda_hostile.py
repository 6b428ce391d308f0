"""`spatialgap frieda-run` (a subprocess) against the hostile endpoint: a key the endpoint echoes
is redacted from every file and the terminal (the one redaction path `run` uses), an unpaired
surrogate is journaled and resumed, and OUT must be its own."""

from __future__ import annotations

import json

from runner_helpers import make_bench, tiny_png

from tests.hostile.helpers import KEY, one_line_error, spatialgap


def _dataset(root):
    (root / "imgs" / "doc").mkdir(parents=True)
    (root / "imgs" / "doc" / "a.png").write_bytes(tiny_png(1))
    q = {
        "question_ref": "q_0001",
        "question_text": "Which feature is closest to F0?",
        "expected_answer": "F1",
        "answer_type": "textual",
        "spatial_relationship": "Distance",
        "map_count": "Single",
        "images": ["doc/a.png"],
        "context_images": [],
    }
    (root / "questions.json").write_text(json.dumps([q]))
    return root


def _frieda(dataset, url, out, *extra, env=None):
    args = ["frieda-run", "--dataset", str(dataset), "--endpoint", url, "--model", "m", "--out", str(out)]
    return spatialgap(*args, "--setting", "direct", *extra, env=env)


def test_an_echoed_key_is_redacted_from_every_file_and_the_terminal(hostile, tmp_path):
    out = tmp_path / "out"
    proc = _frieda(
        _dataset(tmp_path / "ds"), hostile.url("echo-key"), out, "--api-key-env", "HK", env={"HK": KEY}
    )
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert KEY not in proc.stdout + proc.stderr
    texts = {f: f.read_text(errors="replace") for f in out.rglob("*") if f.is_file()}
    assert any("<redacted>" in t for t in texts.values())
    assert not [f for f, t in texts.items() if KEY in t]


def test_a_surrogate_reply_is_journaled_and_the_rerun_reuses_it(hostile, tmp_path):
    ds, out = _dataset(tmp_path / "ds"), tmp_path / "out"
    first = _frieda(ds, hostile.url("surrogate-content"), out)
    assert "Traceback" not in first.stderr, first.stderr[-3000:]
    line = (out / "responses.jsonl").read_text(encoding="utf-8").strip()
    assert "\ufffd" in json.loads(line)["outcome"]["text"]
    again = _frieda(ds, hostile.url("surrogate-content"), out)
    assert "Traceback" not in again.stderr and "0 sent, 1 reused" in again.stderr, again.stderr[-3000:]
    assert hostile.counts["surrogate-content"] == 1


def test_out_holding_a_benchmark_or_a_run_is_refused(hostile, tmp_path):
    bench = make_bench(tmp_path / "bench", n_qa=1, n_edit=0, maps=False)
    before = sorted(p.name for p in bench.iterdir())
    proc = _frieda(_dataset(tmp_path / "ds"), hostile.url("ok"), bench)
    assert proc.returncode == 2 and "holds manifest.json" in one_line_error(proc, "frieda-run")
    assert sorted(p.name for p in bench.iterdir()) == before and not hostile.counts


def test_frieda_score_on_a_result_file_nested_too_deep_is_a_one_line_error(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "m_wo_contextual.json").write_text("[" * 100_000 + "]" * 100_000)
    proc = spatialgap("frieda-score", "--out", str(tmp_path / "out"), str(results / "m_wo_contextual.json"))
    assert proc.returncode == 2
    assert "nested too deeply" in one_line_error(proc, "frieda-score")
