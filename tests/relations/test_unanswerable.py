"""Unanswerable variants (scoring.relations.unanswerable): built in every family of a default
Helsinki build, each re-checked from the instance file alone, answerable items untouched, the
tools agent refusing exactly on them and chance at its rate, measured by scoring.score.refusal."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest
from shapely.geometry import Point, mapping, shape

from scoring.answers import parse_edit, read_edit_reply
from scoring.build.builder import build_benchmark
from scoring.constraints.edits import INSTRUCTION_HEAD
from scoring.errors import InputError
from scoring.relations import CATALOGUE
from scoring.relations.unanswerable import (
    FIRST_NUMBER,
    UnanswerableError,
    check_share,
    share_count,
    verify_unanswerable,
)
from scoring.runner.agents import get_agent
from scoring.runner.agents.chance import REFUSAL_RATE
from scoring.runner.agents.edit_search import EDIT_REFUSAL
from scoring.runner.prompts import build_messages
from scoring.score.refusal import paired_tests, refusal_cells, refusal_csv, refusal_html, refusal_tests_csv
from scoring.score.verdicts import score_edit, score_qa
from scoring.vocab import FAMILIES

KINDS = {
    "missing_feature",
    "coincident_points",
    "sector_edge",
    "withheld_attribute",
    "no_area",
    "infeasible_reach",
}


def _lines(bench: Path, task: str) -> list[str]:
    return (bench / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()


def _load(bench: Path, task: str) -> list[dict]:
    return [json.loads(line) for line in _lines(bench, task)]


@pytest.fixture(scope="module")
def variants(helsinki_bench) -> list[dict]:
    return [i for t in ("qa", "edit") for i in _load(helsinki_bench, t) if "unanswerable" in i]


def test_default_build_has_variants_in_every_family_and_kind(helsinki_bench, variants):
    manifest = json.loads((helsinki_bench / "manifest.json").read_text(encoding="utf-8"))
    for task in ("qa", "edit"):
        fams = {i["family"] for i in variants if i["task"] == task}
        assert fams == set(FAMILIES), f"{task}: unanswerable variants only in {sorted(fams)}"
    assert {i["unanswerable"]["kind"] for i in variants} == KINDS
    # every QA relation has a kind that fits it (the question names a feature, at least)
    assert {i["relation"] for i in variants if i["task"] == "qa"} == set(CATALOGUE)
    u = manifest["unanswerable"]
    assert u["share"] == 0.1
    assert (u["qa"], u["edit"]) == (
        sum(i["task"] == "qa" for i in variants),
        sum(i["task"] == "edit" for i in variants),
    )
    assert sum(u["per_kind"].values()) == len(variants)
    report = (helsinki_bench / "build_report.md").read_text(encoding="utf-8")
    assert f"Unanswerable variants (share 0.1, in addition to the answerable items): {u['qa']} QA" in report
    # 25 answerable per relation and task stay; about one in ten comes in addition
    per_shard = Counter((i["relation"], i["task"]) for i in variants)
    for r in manifest["build_report"]:
        assert r.get("unanswerable", 0) == per_shard[(r["relation"], r["task"])]
        assert r["unanswerable"] <= share_count(r["built"], 0.1)


def test_every_variant_is_rechecked_from_its_file_line(helsinki_bench):
    n = 0
    for task in ("qa", "edit"):
        for line in _lines(helsinki_bench, task):
            inst = json.loads(line)  # nothing but what the file holds
            if "unanswerable" not in inst:
                continue
            n += 1
            assert int(inst["id"].rsplit("-", 1)[1]) >= FIRST_NUMBER
            assert not any(inst["answerable"].values())
            assert verify_unanswerable(inst) == inst["unanswerable"]["reason"]
    assert n > 0


def test_a_variant_differs_from_its_sibling_only_in_the_information(helsinki_bench, variants):
    by_id = {i["id"]: i for t in ("qa", "edit") for i in _load(helsinki_bench, t)}
    for inst in variants:
        sib = by_id[inst["unanswerable"]["sibling"]]
        assert "unanswerable" not in sib and sib["relation"] == inst["relation"]
        if inst["task"] == "qa":
            # same wording, same options (no refusal option added: no tell)
            assert inst["question"] == sib["question"]
            assert inst["choices"] == sib["choices"]
            assert inst["answer"] == "cannot be determined" and inst["correct_choice"] is None
        else:  # the same head and operations wording, other constraint lines (no lead sentence)
            head = INSTRUCTION_HEAD.render(target="F0")
            assert inst["instruction"].startswith(head) and head in sib["instruction"]
            assert inst["instruction"].rsplit("\n", 1)[1].startswith("You may ")
        changed = [
            f["id"]
            for f in inst["scene"]["features"]
            if f != next((g for g in sib["scene"]["features"] if g["id"] == f["id"]), None)
        ]
        removed = {f["id"] for f in sib["scene"]["features"]} - {f["id"] for f in inst["scene"]["features"]}
        # one feature changed or removed (both roads' attributes for a withheld level)
        most = 2 if inst["unanswerable"]["kind"] == "withheld_attribute" else 1
        assert len(changed) + len(removed) <= most, inst["id"]


def _tampered(inst: dict, sibling: dict) -> dict:
    """The variant with its one change undone as far as its kind allows."""
    bad = copy.deepcopy(inst)
    kind = inst["unanswerable"]["kind"]
    if kind == "missing_feature":
        bad["scene"] = copy.deepcopy(sibling["scene"])
    elif kind == "coincident_points":
        f = bad["scene"]["features"][1]
        p = shape(f["geometry"])
        f["geometry"] = mapping(Point(p.x + 30.0, p.y + 10.0))
    elif kind in ("sector_edge", "withheld_attribute", "no_area"):
        bad["scene"] = copy.deepcopy(sibling["scene"])  # the sibling's margin is >= its MARGIN
    else:
        for c in bad["constraints"]:
            if c["measure"] == "min_distance":
                c["max"] = 1e6
    return bad


def test_the_recheck_fails_when_the_reason_is_undone(helsinki_bench, variants):
    by_id = {i["id"]: i for t in ("qa", "edit") for i in _load(helsinki_bench, t)}
    seen = set()
    for inst in variants:
        kind = inst["unanswerable"]["kind"]
        if kind in seen:
            continue
        seen.add(kind)
        with pytest.raises(UnanswerableError):
            verify_unanswerable(_tampered(inst, by_id[inst["unanswerable"]["sibling"]]))
    assert seen == KINDS
    with pytest.raises(UnanswerableError, match="records no unanswerable kind"):
        verify_unanswerable(by_id[variants[0]["unanswerable"]["sibling"]])


def test_answerable_instances_are_byte_identical_whatever_the_share(tmp_path):
    kw = {"n_qa": 6, "n_edit": 4, "relations": ["D02", "M01", "O01", "T04"], "jobs": 1, "progress": False}
    none = build_benchmark(None, tmp_path / "none", unanswerable_share=0.0, **kw)
    some = build_benchmark(None, tmp_path / "some", **kw)
    assert "unanswerable" not in none and some["unanswerable"]["qa"] > 0
    for task in ("qa", "edit"):
        kept = [ln for ln in _lines(tmp_path / "some", task) if '"unanswerable":' not in ln]
        assert kept == _lines(tmp_path / "none", task)


def test_share_rules():
    assert check_share(None, "spatialgap") == 0.1 and check_share(None, "paper") == 0.0
    with pytest.raises(InputError, match="paper protocol"):
        check_share(0.2, "paper")
    with pytest.raises(InputError, match="from 0 to 1"):
        check_share(1.5, "spatialgap")
    assert [share_count(n, 0.1) for n in (0, 1, 10, 25, 40)] == [0, 1, 1, 3, 4]


def _qa_rows(insts: list[dict], agent: str) -> list[dict]:
    fn, rows = get_agent(agent), []
    for inst in insts:
        for modality in ("geojson", "together"):
            for form in ("open", "mcq"):
                png = b"\x89PNG-fake" if modality != "geojson" else None
                reply = fn(build_messages(inst, modality, form, png))
                v = score_qa(inst, reply, form=form, modality=modality)
                rows.append(_row(inst, agent, modality, form, v))
    return rows


def _row(inst, agent, modality, form, v) -> dict:
    return {
        "id": inst["id"],
        "model": agent,
        "modality": modality,
        "form": form,
        "family": inst["family"],
        "verdict": v.verdict,
        "reason": v.reason,
        "answerable": inst["answerable"][modality],
        "scene": inst["id"],
    }


def test_tools_refuses_exactly_on_unanswerable_items_and_chance_at_its_rate(helsinki_bench, variants):
    qa = _load(helsinki_bench, "qa")
    tools = _qa_rows(qa, "tools")
    assert all(r["verdict"] in ("correct", "correct_refusal") for r in tools), [
        (r["id"], r["form"], r["verdict"], r["reason"])
        for r in tools
        if r["verdict"] not in ("correct", "correct_refusal")
    ][:5]
    edits = [i for i in variants if i["task"] == "edit"]
    fn = get_agent("tools")
    for inst in edits:
        reply = fn(build_messages(inst, "geojson", "edit", None))
        assert reply == EDIT_REFUSAL
        tools.append(_row(inst, "tools", "geojson", "edit", score_edit(inst, reply, modality="geojson")))
    cells = {(c["modality"], c["family"]): c for c in refusal_cells(tools)}
    for key, c in cells.items():
        assert c["refusal_recall"] == 1.0 and c["refusal_precision"] == 1.0, key
        assert c["false_refusal_rate"] == 0.0 and c["answerable_accuracy"] == 1.0, key
    chance = _qa_rows(qa, "chance")
    overall = [c for c in refusal_cells(chance) if c["family"] == "all"]
    for c in overall:
        n = c["n_unanswerable"] + c["n_answerable"]
        rate = (c["correct_refusals"] + c["false_refusals"]) / n
        assert abs(rate - REFUSAL_RATE) < 0.03, (c["modality"], rate)  # about 1 400 samples each
        assert c["refusal_recall_low"] <= REFUSAL_RATE <= c["refusal_recall_high"]
    chance_fn = get_agent("chance")  # edit prompts invite no refusal: chance always edits
    assert all(
        "operations" in json.loads(chance_fn(build_messages(i, "geojson", "edit", None))) for i in edits
    )
    fragment = refusal_html(tools + chance)
    assert "<table" in fragment and "tools" in fragment and "100.0" in fragment


def test_refusal_measures_on_known_rows():
    def row(i, modality, answerable, verdict, reason=""):
        return {
            "id": f"x-{i}",
            "model": "m",
            "modality": modality,
            "form": "open",
            "family": "metric",
            "verdict": verdict,
            "reason": reason,
            "answerable": answerable,
            "scene": f"s{i}",
        }

    rows = [
        row(1, "geojson", False, "correct_refusal"),
        row(2, "geojson", False, "unfounded_answer"),
        row(3, "geojson", True, "wrong", "refusal"),
        row(4, "geojson", True, "correct"),
        row(5, "geojson", True, "wrong", "off by 3 m"),
        row(1, "image", False, "unfounded_answer"),
        row(2, "image", False, "unfounded_answer"),
    ]
    c = next(c for c in refusal_cells(rows) if c["modality"] == "geojson" and c["family"] == "metric")
    assert (c["n_unanswerable"], c["correct_refusals"], c["false_refusals"]) == (2, 1, 1)
    assert c["refusal_recall"] == 0.5 and c["refusal_precision"] == 0.5
    assert c["false_refusal_rate"] == pytest.approx(1 / 3) and c["answerable_accuracy"] == pytest.approx(
        1 / 3
    )
    assert c["refusal_recall_low"] < 0.5 < c["refusal_recall_high"]
    t = next(t for t in paired_tests(rows) if t["family"] == "all")
    assert (t["first"], t["second"], t["n"], t["only_first"], t["only_second"]) == (
        "geojson",
        "image",
        2,
        1,
        0,
    )
    assert t["samples"] == "unanswerable" and t["test"] == "exact"
    # false refusals are paired too: geojson refuses answerable x-3, image does not
    rows.append(row(3, "image", True, "wrong", "off by 1 m"))
    fr = next(t for t in paired_tests(rows) if t["family"] == "all" and t["samples"] == "answerable")
    assert (fr["n"], fr["only_first"], fr["only_second"]) == (1, 1, 0)
    text = refusal_csv(refusal_cells(rows))
    assert text.splitlines()[0].startswith("model,modality,family,n_unanswerable")
    tests_text = refusal_tests_csv(paired_tests(rows))
    assert tests_text.splitlines()[0].startswith("model,family,samples,first,second,n,only_first")
    assert len(tests_text.splitlines()) == 1 + len(paired_tests(rows))


def test_an_edit_reply_saying_no_edit_exists_is_a_refusal_and_not_re_asked():
    for text in (EDIT_REFUSAL, "These constraints are infeasible.", "Answer: cannot be determined"):
        assert parse_edit(text).refusal, text
        assert read_edit_reply(text).retry_reason is None, text
    assert not parse_edit('{"operations": [{"op": "translate", "dx": 1, "dy": 0}]}').refusal
