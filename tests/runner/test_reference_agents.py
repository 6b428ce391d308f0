"""The `tools` and `centroid` reference agents, checked with the project's own parsers and
checkers on the real Helsinki benchmark (and one run over real HTTP)."""

import importlib.util
import json
import math
from pathlib import Path

import pytest
from shapely.affinity import translate
from shapely.geometry import mapping, shape

from scoring.answers import parse_edit
from scoring.constraints.facts import describe_constraint
from scoring.formats.rundir import final_predictions
from scoring.relations import CATALOGUE
from scoring.runner.agents import get_agent, start_server
from scoring.runner.agents.instructions import STATEMENTS, parse_constraint, parse_instruction
from scoring.runner.config import ModelSpec
from scoring.runner.prompts import build_messages
from scoring.runner.run import run_benchmark

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("agents_eval", ROOT / "tests" / "perf" / "agents_eval.py")
agents_eval = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(agents_eval)

PER_RELATION = 2


def _load(bench, task):
    return [json.loads(line) for line in (bench / f"{task}.jsonl").open(encoding="utf-8")]


@pytest.fixture(scope="module")
def sample(helsinki_bench):
    """The first PER_RELATION instances of every relation, per task (deterministic)."""
    out = {}
    for task in ("qa", "edit"):
        seen, picked = {}, []
        for inst in _load(helsinki_bench, task):
            if seen.get(inst["relation"], 0) < PER_RELATION:
                seen[inst["relation"]] = seen.get(inst["relation"], 0) + 1
                picked.append(inst)
        out[task] = picked
    assert {i["relation"] for i in out["qa"]} == set(CATALOGUE) == {i["relation"] for i in out["edit"]}
    return out


def _score(agent_name, instances, modality="geojson"):
    """{(task, form): (correct, total)} and the misses."""
    fn = get_agent(agent_name)
    tally, misses = {}, []
    for inst in instances:
        forms = ("open", "mcq") if inst["task"] == "qa" else ("edit",)
        for form in forms:
            reply = fn(build_messages(inst, modality, form, None))
            ok, detail = (
                agents_eval.check_qa(inst, form, modality, reply)
                if inst["task"] == "qa"
                else agents_eval.check_edit(inst, modality, reply)
            )
            c, n = tally.get((inst["task"], form), (0, 0))
            tally[(inst["task"], form)] = (c + ok, n + 1)
            if not ok:
                misses.append((inst["id"], form, detail))
    return tally, misses


@pytest.fixture(scope="module")
def scores(sample):
    everything = sample["qa"] + sample["edit"]
    return {name: _score(name, everything) for name in ("tools", "centroid", "chance")}


def _rate(tally, key):
    c, n = tally[key]
    return c / n


def test_tools_answers_and_edits_from_the_prompt(scores):
    tally, misses = scores["tools"]
    for key in (("qa", "open"), ("qa", "mcq"), ("edit", "edit")):
        assert _rate(tally, key) >= 0.99, (key, tally[key], misses)
    assert tally[("qa", "open")][1] == len(CATALOGUE) * PER_RELATION
    assert tally[("edit", "edit")][1] == len(CATALOGUE) * PER_RELATION


def test_centroid_lies_between_chance_and_tools(scores):
    for key in (("qa", "open"), ("qa", "mcq"), ("edit", "edit")):
        chance, careless, tools = (_rate(scores[n][0], key) for n in ("chance", "centroid", "tools"))
        assert chance < careless < tools, (key, chance, careless, tools)

    def total(n):
        return sum(c for c, _ in scores[n][0].values()) / sum(t for _, t in scores[n][0].values())

    assert total("centroid") >= total("chance") + 0.25 and total("centroid") <= total("tools") - 0.15


def test_tools_reads_only_the_prompt(sample):
    """Instances stripped of everything a model never sees are answered the same, and the
    answer follows the scene: moving F1 to the other side of F0 flips the direction."""
    hidden = ("answer", "correct_choice", "facts", "margin", "provenance", "constraints", "reference_edit")
    fn = get_agent("tools")
    for inst in sample["qa"][:10] + sample["edit"][:10]:
        bare = {k: v for k, v in inst.items() if k not in hidden}
        form = "mcq" if inst["task"] == "qa" else "edit"
        assert fn(build_messages(bare, "geojson", form, None)) == fn(
            build_messages(inst, "geojson", form, None)
        )
    d01 = next(i for i in sample["qa"] if i["relation"] == "D01")
    g0, g1 = (shape(f["geometry"]) for f in d01["scene"]["features"][:2])
    c0, c1 = g0.centroid, g1.centroid
    mirrored = json.loads(json.dumps(d01))  # F1 moved to the opposite side of F0
    mirrored["scene"]["features"][1]["geometry"] = mapping(
        translate(g1, 2 * (c0.x - c1.x), 2 * (c0.y - c1.y))
    )
    opposite = {"N": "S", "S": "N", "E": "W", "W": "E"}[d01["answer"]]
    assert fn(build_messages(d01, "geojson", "open", None)) == f"Answer: {d01['answer']}"
    assert fn(build_messages(mirrored, "geojson", "open", None)) == f"Answer: {opposite}"


def test_together_modality_reads_the_geojson(sample):
    """`together` carries the same GeoJSON next to the map: the same answers as `geojson`."""
    png = b"\x89PNG\r\n\x1a\n-placeholder"
    fn = get_agent("tools")
    for inst in sample["qa"][::5] + sample["edit"][::5]:
        form = "open" if inst["task"] == "qa" else "edit"
        reply = fn(build_messages(inst, "together", form, png))
        assert reply == fn(build_messages(inst, "geojson", form, None))
        ok, detail = (
            agents_eval.check_qa(inst, form, "together", reply)
            if inst["task"] == "qa"
            else agents_eval.check_edit(inst, "together", reply)
        )
        assert ok, (inst["id"], detail)


def test_agents_are_deterministic(sample):
    msgs = build_messages(sample["edit"][0], "geojson", "edit", None)
    for name in ("tools", "centroid"):
        assert get_agent(name)(msgs) == get_agent(name)(msgs)


def test_tools_refuses_unanswerable_layer_questions(helsinki_bench):
    # (the variants of scoring.relations.unanswerable are tested in tests/relations/test_unanswerable.py)
    qa = [i for i in _load(helsinki_bench, "qa") if "unanswerable" not in i]
    unanswerable = [i for i in qa if not i["answerable"]["geojson"]]
    assert unanswerable, "the benchmark has no withheld-attribute instances"
    fn = get_agent("tools")
    for inst in unanswerable:
        open_reply = fn(build_messages(inst, "geojson", "open", None))
        assert open_reply == "Answer: cannot be determined"
        mcq_reply = fn(build_messages(inst, "geojson", "mcq", None))
        assert agents_eval.check_qa(inst, "mcq", "geojson", mcq_reply)[0]
        assert inst["choices"]["ABCD".index(mcq_reply[-1])] == "cannot be determined"
    # The same roads with their attributes shown are answered, not refused.
    answerable = [
        i for i in _load(helsinki_bench, "qa") if i["relation"] == "O06" and i["answerable"]["geojson"]
    ]
    assert all(
        agents_eval.check_qa(i, "open", "geojson", fn(build_messages(i, "geojson", "open", None)))[0]
        for i in answerable[:5]
    )


def _same_constraint(parsed, real):
    if parsed["measure"] != real["measure"]:
        # Four- and eight-way direction constraints read alike; the parser takes the 8-way sector.
        return {parsed["measure"], real["measure"]} == {"direction4", "direction8"} and parsed[
            "value"
        ] == real["value"]
    if set(parsed["args"]) != set(real["args"]) or parsed["op"] != real["op"]:
        return False
    for k in ("min", "max", "target", "tolerance"):
        if k in real and not math.isclose(parsed[k], real[k], rel_tol=1e-5, abs_tol=1e-3):
            return False
    if real["op"] == "is" and parsed["value"] != real["value"]:
        return False
    if real["measure"] == "endpoint_connected":
        # The instruction does not state the 0.05 m tolerance: the parser assumes a stricter 1 mm.
        return (
            parsed["params"]["eps"] <= real["params"].get("eps", 0.0) or real["params"].get("eps", 0.0) == 0
        )
    return all(math.isclose(parsed["params"].get(k, -1), v) for k, v in real.get("params", {}).items())


def test_instruction_lines_parse_back_into_the_constraints(helsinki_bench):
    """The inverse of describe_constraint, over every edit instance of the benchmark."""
    edits = _load(helsinki_bench, "edit")
    for inst in edits:
        parsed, allowed = parse_instruction("Instruction: " + inst["instruction"])
        assert allowed == inst["allowed_operations"], inst["id"]
        assert len(parsed) == len(inst["constraints"]), inst["id"]
        for p, r in zip(parsed, inst["constraints"], strict=False):
            assert _same_constraint(p, r), (inst["id"], p, r)


def test_image_modality_is_answered_honestly(sample):
    """No coordinates: the tools cannot be used, so QA is refused and edits are minimal nudges."""
    png = b"\x89PNG\r\n\x1a\n-not-looked-at"
    fn = get_agent("tools")
    qa = next(i for i in sample["qa"] if i["relation"] == "M01")
    assert fn(build_messages(qa, "image", "open", png)) == "Answer: cannot be determined"
    edit = next(i for i in sample["edit"] if i["relation"] == "T02")
    ops = parse_edit(fn(build_messages(edit, "image", "edit", png))).value["operations"]
    assert ops == [{"op": "translate", "dx": 1.0, "dy": 0.0}]
    layer = next(i for i in sample["edit"] if i["relation"] == "O06")
    assert (
        parse_edit(fn(build_messages(layer, "image", "edit", png))).value["operations"][0]["op"]
        == "set_attribute"
    )


def test_malformed_prompts_get_an_answer_not_an_error(sample):
    """Unknown ids, a broken scene or an unknown wording: the agents answer as without the
    information (a refusal or the minimal edit) instead of failing the request."""
    qa = dict(next(i for i in sample["qa"] if i["relation"] == "M01"))
    qa["question"] = qa["question"].replace("F1", "F9")  # no such feature
    broken = dict(qa, scene={"type": "FeatureCollection", "features": [{"id": "F0", "geometry": None}]})
    odd = dict(next(i for i in sample["qa"] if i["relation"] == "M01"), question="How lovely is F0?")
    edit = dict(next(i for i in sample["edit"] if i["relation"] == "T02"))
    edit["instruction"] = "Edit only F0 so that all of the following hold:\n1. F0 is delightful"
    for name in ("tools", "centroid"):
        fn = get_agent(name)
        for inst in (qa, broken, odd):
            assert fn(build_messages(inst, "geojson", "open", None)) == "Answer: cannot be determined"
        assert fn([{"role": "user", "content": "hello"}]) == "Answer: cannot be determined"
        ops = parse_edit(fn(build_messages(edit, "geojson", "edit", None))).value["operations"]
        assert ops == [{"op": "translate", "dx": 0.5, "dy": 0.0}]


def test_tools_served_over_http_end_to_end(helsinki_bench, sample, tmp_path):
    srv, _ = start_server("tools")
    try:
        spec = ModelSpec.from_endpoint(srv.base_url, "tools", timeout_s=30)
        picks = {"qa": [i["id"] for i in sample["qa"][::9]], "edit": [i["id"] for i in sample["edit"][::9]]}
        by_id = {i["id"]: i for i in sample["qa"] + sample["edit"]}
        for task, ids in picks.items():
            out = tmp_path / task
            s = run_benchmark(helsinki_bench, spec, "geojson", task, None, out, progress=False, ids=ids)
            assert s.failed == 0
            preds = final_predictions(out / "predictions.jsonl")
            assert len(preds) == len(ids) * (2 if task == "qa" else 1)
            for rec in preds.values():
                inst = by_id[rec["instance_id"]]
                assert rec["status"] == "ok" and rec["endpoint_model"] == "tools"
                ok, detail = (
                    agents_eval.check_qa(inst, rec["form"], "geojson", rec["text"])
                    if task == "qa"
                    else agents_eval.check_edit(inst, "geojson", rec["text"])
                )
                assert ok, (rec["instance_id"], rec["form"], detail)
    finally:
        srv.shutdown()
        srv.server_close()


def test_every_question_is_read_back_by_its_own_wording(helsinki_bench):
    """The tools agent's patterns are derived from the catalogue's wordings: every built question
    is read by exactly one of them, and that one belongs to the question's relation."""
    for inst in _load(helsinki_bench, "qa"):
        readers = [code for code, rel in CATALOGUE.items() for w in rel.questions if w.read(inst["question"])]
        assert readers == [inst["relation"]], (inst["id"], readers)


def test_every_constraint_line_reads_back_as_one_sentence(helsinki_bench):
    """describe_constraint's sentences are unambiguous once the predicates that state their own
    tolerance are tried first (the order parse_constraint uses)."""
    for inst in _load(helsinki_bench, "edit"):
        for c in inst["constraints"]:
            line = describe_constraint(c)
            readers = [w for w, _ in STATEMENTS if w.read(line)]
            assert readers, (inst["id"], line)
            assert parse_constraint(line)["measure"] == c["measure"], (inst["id"], line)
