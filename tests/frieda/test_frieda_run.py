"""``spatialgap frieda-run`` end to end: a FRIEDA-format dataset made from our own rendered maps
(answers measured on the scenes with shapely), sent through a real HTTP server on loopback in the
direct and the contextual setting, the replies scored by the frieda-score rules."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import sys
import threading
from pathlib import Path

import pytest
from shapely.geometry import shape

from scoring.cli import main
from scoring.frieda.dataset import load_dataset
from scoring.frieda.run import INSTRUCTIONS, final_answer
from scoring.runner.agents import AgentServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
from render_synthetic import make_bench

ROSE = ["north", "north east", "east", "south east", "south", "south west", "west", "north west"]


def _geoms(inst: dict) -> dict:
    return {f["properties"]["id"]: shape(f["geometry"]) for f in inst["scene"]["features"]}


def _direction(a, b) -> int:
    """Index on the 8-point rose of b seen from a (centroids, grid north up)."""
    ca, cb = a.centroid, b.centroid
    bearing = math.degrees(math.atan2(cb.x - ca.x, cb.y - ca.y)) % 360
    return int((bearing + 22.5) // 45) % 8


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> dict:
    """FRIEDA layout: questions.json + imgs/<document>/<map>.png, from four rendered maps."""
    from scoring.render import render_benchmark

    root = tmp_path_factory.mktemp("frieda")
    bench = make_bench(root / "bench")
    insts = [json.loads(x) for x in (bench / "qa.jsonl").read_text().splitlines()][:4]
    render_benchmark(bench, jobs=1, progress=False, ids=[i["id"] for i in insts])
    data = root / "dataset"
    names = []
    for k, inst in enumerate(insts):
        doc = "report-a" if k < 3 else "report-b"  # a document of three maps and one of one
        name = f"{doc}/image{k + 1}_1.png"
        (data / "imgs" / doc).mkdir(parents=True, exist_ok=True)
        (data / "imgs" / name).write_bytes((bench / "maps" / f"{inst['id']}.png").read_bytes())
        names.append(name)
    g0, g1, g3 = _geoms(insts[0]), _geoms(insts[1]), _geoms(insts[3])
    dist = round(g0["F0"].distance(g0["F2"]))
    d = _direction(g1["F0"], g1["F1"])
    nearest = min((f for f in g3 if f != "F0"), key=lambda f: g3["F0"].distance(g3[f]))
    questions = [
        {
            "question_ref": "q_0001",
            "question_text": "How far is F2 from F0 on the map, in metres?",
            "expected_answer": f"{dist} m",
            "answer_type": "distance",
            "spatial_relationship": "Distance",
            "map_count": "Single",
            "images": [names[0]],
            "context_images": [names[1], names[2]],
            "domain": "test",
        },
        {
            "question_ref": "q_0002",
            "question_text": "In which direction is F1 from F0?",
            # FRIEDA lists the direction and its two neighbours as accepted labels
            "expected_answer": "; ".join(ROSE[(d + i) % 8] for i in (0, -1, 1)),
            "answer_type": "cardinal",
            "spatial_relationship": "Orientation",
            "map_count": "Single",
            "images": [names[1]],
            "context_images": [names[0], names[2]],
        },
        {
            "question_ref": "q_0003",
            "question_text": "Which feature ids appear on both maps?",
            "expected_answer": "F0; F1",
            "answer_type": "textual",
            "spatial_relationship": "Equal",
            "map_count": "Multi",
            "images": [names[0], names[2]],
            "context_images": [names[1]],
        },
        {
            "question_ref": "q_0004",
            "question_text": "Which feature is closest to F0?",
            "expected_answer": nearest,
            "answer_type": "textual",
            "spatial_relationship": "Distance",
            "map_count": "Single",
            "images": [names[3]],
            "context_images": [],
        },
    ]
    (data / "questions.json").write_text(json.dumps(questions, indent=1))
    sha = {n: hashlib.sha256((data / "imgs" / n).read_bytes()).hexdigest() for n in names}
    return {"dir": data, "questions": questions, "names": names, "sha": sha, "dist": dist, "dir_index": d}


class _Fixture:
    """Stands in for a model: answers from the fixture's expected answers, in FRIEDA's format,
    except that a distance asked with more maps than the relevant one is answered twice too long
    (the contextual setting's distractors confuse it). Records every request it receives."""

    def __init__(self, ds: dict):
        self.ds = ds
        self.requests: list[tuple[str, str, list[str]]] = []
        self.lock = threading.Lock()

    def __call__(self, messages: list[dict]) -> str:
        system, user = messages[0]["content"], messages[1]["content"]
        question = user[0]["text"]
        images = [
            hashlib.sha256(base64.b64decode(p["image_url"]["url"].split(",", 1)[1])).hexdigest()
            for p in user[1:]
            if p["type"] == "image_url"
        ]
        with self.lock:
            self.requests.append((system, question, images))
        q = next(q for q in self.ds["questions"] if q["question_text"] == question)
        answer = (
            q["expected_answer"].split(";")[0] if q["answer_type"] == "cardinal" else q["expected_answer"]
        )
        if q["answer_type"] == "distance" and len(images) > len(q["images"]):
            answer = f"{2 * self.ds['dist']} m"
        return f"I compared the maps carefully.\n\n**Final answer:** {answer}"


@pytest.fixture
def endpoint(dataset):
    fixture = _Fixture(dataset)
    server = AgentServer(("127.0.0.1", 0), "frieda-fixture", fixture)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.base_url, fixture
    server.shutdown()
    server.server_close()


def _run(dataset, url, out, *extra) -> int:
    return main(
        [
            "frieda-run",
            "--dataset",
            str(dataset["dir"]),
            "--endpoint",
            url,
            "--model",
            "frieda-fixture",
            "--out",
            str(out),
            "--order-seed",
            "7",
            *extra,
        ]
    )


def test_both_settings_end_to_end(dataset, endpoint, tmp_path, capsys):
    url, fixture = endpoint
    out = tmp_path / "run"
    assert _run(dataset, url, out) == 0
    sha, names = dataset["sha"], dataset["names"]

    # what the server received: FRIEDA's instructions, the question, then the maps in order
    assert len(fixture.requests) == 8
    assert all(system == INSTRUCTIONS and "Final answer:" in system for system, _, _ in fixture.requests)
    got: dict[tuple[str, int], list[str]] = {}
    for _, question, images in fixture.requests:
        got[(question, len(images))] = images
    q1, q3, q4 = dataset["questions"][0], dataset["questions"][2], dataset["questions"][3]
    # direct: the relevant maps, as listed
    assert got[(q1["question_text"], 1)] == [sha[names[0]]]
    assert got[(q3["question_text"], 2)] == [sha[names[0]], sha[names[2]]]
    # contextual: every map of the document once, shuffled by Random("<seed>:<question_ref>")
    every = [names[0], names[1], names[2]]
    random.Random("7:q_0001").shuffle(every)
    assert got[(q1["question_text"], 3)] == [sha[n] for n in every]
    assert got[(q4["question_text"], 1)] == [sha[names[3]]]  # a one-map document: the same map

    # FRIEDA result files, scored by the frieda-score rules
    direct = json.loads((out / "results" / "frieda-fixture_wo_contextual.json").read_text())
    context = json.loads((out / "results" / "frieda-fixture_w_contextual.json").read_text())
    assert [r["correct"] for r in direct] == [True, True, True, True]
    assert [r["correct"] for r in context] == [False, True, True, True]
    assert direct[2]["_response"] == ["F0", "F1"] and direct[2]["map_count"] == "Multi"
    assert direct[0]["expected_answer"] == [f"{dataset['dist']} m"] and direct[0]["domain"] == "test"
    assert context[0]["image_urls"] == every
    summary = json.loads((out / "summary.json").read_text())
    files = {e["setting"]: e for e in summary["files"].values()}
    assert files["wo_contextual"]["accuracy"] == 1.0 and files["w_contextual"]["accuracy"] == 0.75
    sa = summary["statistics"]["setting_agreement"]
    assert sa["models"] == [{"model": "frieda-fixture", "n": 4, "ours": 0.75, "original": 0.75}]
    mape = {(r["setting"], r["relation"]): r["mape"] for r in summary["statistics"]["mape"]}
    assert mape[("wo_contextual", "ALL")] == 0.0 and mape[("w_contextual", "ALL")] == 100.0
    assert len((out / "verdicts.jsonl").read_text().splitlines()) == 8
    printed = capsys.readouterr().out
    assert "frieda-fixture" in printed and "direct vs contextual" in printed

    # the same command again resends nothing, and the results can be re-scored by frieda-score
    assert _run(dataset, url, out) == 0
    assert len(fixture.requests) == 8
    assert "0 sent, 8 reused" in capsys.readouterr().err
    assert main(["frieda-score", str(out / "results"), "--out", str(tmp_path / "rescored")]) == 0


def test_one_setting_and_selected_questions(dataset, endpoint, tmp_path):
    url, fixture = endpoint
    out = tmp_path / "run"
    assert _run(dataset, url, out, "--setting", "contextual", "--ids", "q_0002", "q_0004") == 0
    assert len(fixture.requests) == 2
    assert sorted(p.name for p in (out / "results").iterdir()) == ["frieda-fixture_w_contextual.json"]


def test_failed_requests_are_recorded_and_retried(dataset, tmp_path, capsys):
    out = tmp_path / "run"
    # nothing listens on port 9 of loopback: every request fails, the records say why
    config = tmp_path / "models.toml"
    config.write_text(
        '[models.dead]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "frieda-fixture"\n'
        "max_retries = 1\nbackoff_base_s = 0.01\nbackoff_max_s = 0.02\n"
    )
    args = ["frieda-run", "--dataset", str(dataset["dir"]), "--config", str(config), "--model", "dead"]
    assert main([*args, "--out", str(out), "--limit", "1"]) == 1
    recs = json.loads((out / "results" / "dead_wo_contextual.json").read_text())
    assert recs[0]["_response"] is None and recs[0]["error"]["kind"] == "connect"
    assert recs[0]["verdict"] == "unparsed" and recs[0]["correct"] is False
    assert "re-run the same command" in capsys.readouterr().err


def test_bad_datasets_fail_before_sending(dataset, tmp_path, capsys):
    data = tmp_path / "d"
    (data / "imgs").mkdir(parents=True)
    q = dict(dataset["questions"][0], images=["missing.png"], context_images=[])
    (data / "questions.json").write_text(json.dumps([q]))
    assert _run({"dir": data}, "http://127.0.0.1:9/v1", tmp_path / "o") == 2
    err = capsys.readouterr().err
    assert "image 'missing.png' not found" in err and len(err.strip().splitlines()) == 1
    for bad, message in (
        (dict(q, images=["../../etc/passwd"]), "outside"),
        (dict(q, answer_type="number"), "answer_type 'number'"),
        ({k: v for k, v in q.items() if k != "question_text"}, "missing question_text"),
        ([q, q], "occurs twice"),
    ):
        (data / "questions.json").write_text(json.dumps(bad if isinstance(bad, list) else [bad]))
        assert _run({"dir": data}, "http://127.0.0.1:9/v1", tmp_path / "o") == 2
        assert message in capsys.readouterr().err


def test_dataset_reads_result_file_field_names(tmp_path):
    # FRIEDA's result records name the maps image_urls / contextual_urls and list the answer parts
    (tmp_path / "a.png").write_bytes(b"\x89PNG\r\n\x1a\nxx")
    (tmp_path / "b.png").write_bytes(b"\x89PNG\r\n\x1a\nyy")
    rec = {
        "question_ref": "q1",
        "question_text": "Q?",
        "expected_answer": ["Zone A", " Zone B "],
        "answer_type": "textual",
        "image_urls": ["a.png"],
        "contextual_urls": ["b.png", "a.png"],
    }
    (tmp_path / "q.jsonl").write_text(json.dumps(rec) + "\n")
    ds = load_dataset(tmp_path / "q.jsonl")
    q = ds.questions[0]
    assert q.expected == ("Zone A", "Zone B") and q.images == ("a.png",)
    assert sorted(q.maps("contextual", 0)) == ["a.png", "b.png"]  # each map once
    assert q.maps("contextual", 0) == q.maps("contextual", 0)


@pytest.mark.parametrize(
    "text, answer, parts",
    [
        ("Reasoning.\nFinal answer: Zone A; Zone B", "Zone A; Zone B", ["Zone A", "Zone B"]),
        ("**Final Answer:** 40 m", "40 m", ["40 m"]),
        ("final answer: x\nFinal answer: North East", "North East", ["North East"]),
        ("just prose", "just prose", ["just prose"]),
        (None, "", []),
    ],
)
def test_final_answer(text, answer, parts):
    assert final_answer(text) == (answer, parts)
