"""The optional FRIEDA judge model through a configured endpoint (real HTTP on loopback): used
only for textual answers without an exact match, its use reported, its key never written."""

import json

from scoring.cli import main
from scoring.runner.agents import agent, start_server


@agent("test-judge")
def lenient_judge(messages):
    text = messages[-1]["content"]
    expected = text.split("Expected answer: ")[1].split("\n")[0].lower()
    response = text.split("Model's answer: ")[1].split("\n")[0].lower()
    return "yes" if expected.split()[0] in response else "no"


def test_judge_endpoint(tmp_path, monkeypatch, capsys):
    records = [
        {
            "question_ref": "q1",
            "question_text": "Which park is north of the river?",
            "expected_answer": ["Central Park"],
            "_response": ["Central Park"],
            "answer_type": "textual",
            "spatial_relationship": "Direction",
            "map_count": "Single",
            "correct": True,
        },
        {
            "question_ref": "q2",
            "question_text": "Which park is south of the river?",
            "expected_answer": ["Riverside Park"],
            "_response": ["the Riverside park area near the bridge"],
            "answer_type": "textual",
            "spatial_relationship": "Direction",
            "map_count": "Single",
            "correct": True,
        },
        {
            "question_ref": "q3",
            "question_text": "Which zone contains the school?",
            "expected_answer": ["Zone B"],
            "_response": ["The harbour"],
            "answer_type": "textual",
            "spatial_relationship": "Containment",
            "map_count": "Multi",
            "correct": False,
        },
    ]
    f = tmp_path / "model__test_w_contextual.json"
    f.write_text(json.dumps(records))
    secret = "sk-test-never-written-0123456789"
    monkeypatch.setenv("JUDGE_KEY", secret)
    server, _ = start_server("test-judge")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        out = tmp_path / "out"
        assert (
            main(
                [
                    "frieda-score",
                    str(f),
                    "--out",
                    str(out),
                    "--judge-model",
                    "test-judge",
                    "--judge-endpoint",
                    url,
                    "--judge-api-key-env",
                    "JUDGE_KEY",
                ]
            )
            == 0
        )
    finally:
        server.shutdown()
    rows = {r["question_ref"]: r for r in map(json.loads, (out / "verdicts.jsonl").read_text().splitlines())}
    assert rows["q1"]["verdict"] == "correct" and not rows["q1"]["judge_used"]
    assert rows["q2"]["verdict"] == "correct" and rows["q2"]["judge_used"]
    assert rows["q3"]["verdict"] == "wrong" and rows["q3"]["judge_used"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judge"]["calls"] == 2 and summary["judge"]["model"]["model"] == "test-judge"
    printed = capsys.readouterr().out
    assert "2 textual answers" in printed
    for p in out.iterdir():
        assert secret not in p.read_text()
    assert secret not in printed


def test_judge_options_need_a_model(tmp_path, capsys):
    f = tmp_path / "m__x_w_contextual.json"
    f.write_text("[]")
    assert (
        main(
            [
                "frieda-score",
                str(f),
                "--out",
                str(tmp_path / "o"),
                "--judge-endpoint",
                "http://127.0.0.1:9/v1",
            ]
        )
        == 2
    )
    assert "need --judge-model" in capsys.readouterr().err


@agent("test-two-step-judge")
def two_step_judge(messages):
    """Extracts the words after "is" (NONE when there is no "is"), then compares like the
    lenient judge; the prompts it receives are what the procedure sends."""
    text = messages[-1]["content"]
    if text.rstrip().endswith("Answer portion:"):
        response = text.split("Response: ")[1].split("\n")[0]
        return response.split(" is ", 1)[1] if " is " in response else "NONE"
    expected = text.split("Expected answer: ")[1].split("\n")[0].lower()
    answer = text.split("Model's answer: ")[1].split("\n")[0].lower()
    return "yes" if answer.strip(" .") == expected else "no"


def test_two_step_judge(tmp_path, capsys):
    base = {"answer_type": "textual", "spatial_relationship": "Within", "map_count": "Single"}
    records = [
        # step 1 extracts "Riverside Park", step 2 accepts it
        dict(
            base,
            question_ref="q1",
            question_text="Which park?",
            expected_answer=["Riverside Park"],
            _response=["I think the park is Riverside Park."],
            correct=True,
        ),
        # step 1 extracts nothing: wrong without a comparison request
        dict(
            base,
            question_ref="q2",
            question_text="Which zone?",
            expected_answer=["Zone B"],
            _response=["Hard to say from these maps"],
            correct=False,
        ),
        # exact match: the judge is never asked
        dict(
            base,
            question_ref="q3",
            question_text="Which zone?",
            expected_answer=["Zone C"],
            _response=["Zone C"],
            correct=True,
        ),
    ]
    f = tmp_path / "model__test_wo_contextual.json"
    f.write_text(json.dumps(records))
    server, _ = start_server("test-two-step-judge")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        out = tmp_path / "out"
        args = ["frieda-score", str(f), "--out", str(out), "--judge-model", "test-two-step-judge"]
        assert main([*args, "--judge-endpoint", url, "--judge-prompt", "two-step"]) == 0
    finally:
        server.shutdown()
    rows = {r["question_ref"]: r for r in map(json.loads, (out / "verdicts.jsonl").read_text().splitlines())}
    assert rows["q1"]["verdict"] == "correct" and rows["q1"]["judge_used"]
    assert rows["q2"]["verdict"] == "wrong" and rows["q2"]["judge_used"]
    assert rows["q3"]["verdict"] == "correct" and not rows["q3"]["judge_used"]
    judge = json.loads((out / "summary.json").read_text())["judge"]
    # two answers sent to the judge: 2 requests for q1, 1 for q2
    assert (judge["procedure"], judge["calls"], judge["requests"]) == ("two-step", 2, 3)
    assert len(judge["prompts"]) == 2 and "Answer portion:" in judge["prompts"][0]
    assert "(two-step): 2 textual answers" in capsys.readouterr().out
