"""Accuracy of a reference agent over a benchmark, in-process (no HTTP, no journal).

    .venv/bin/python tests/perf/agents_eval.py --bench out/helsinki [--agent tools]
        [--modality geojson] [--task qa|edit] [--limit N] [--misses 20]

Builds the prompts with scoring.runner.prompts.build_messages for every instance and form, calls
the agent function and checks its reply with the project's own parsers and checkers:
QA: scoring.answers.parse_answer / parse_choice + the catalogue's Relation.check_answer
(unanswerable instances expect a refusal); editing: scoring.answers.parse_edit +
scoring.constraints.edits.apply_edit + scoring.constraints.facts.all_hold with the instance's
constraints and initial scene. Pixel edits (image modality) are only checked for being valid
edits: converting pixels to metres is the scorer's business. Prints accuracy per relation and
form and lists misses.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scoring.answers import parse_answer, parse_choice, parse_edit
from scoring.constraints.edits import EditError, apply_edit
from scoring.constraints.facts import all_hold
from scoring.geometry.scene import Scene
from scoring.relations import CATALOGUE
from scoring.relations.base import REFUSAL
from scoring.runner.agents import get_agent
from scoring.runner.prompts import build_messages
from scoring.vocab import MODALITIES, QA_FORMS


def load(bench: Path, task: str) -> list[dict]:
    path = bench / ("qa.jsonl" if task == "qa" else "edit.jsonl")
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def check_qa(inst: dict, form: str, modality: str, reply: str) -> tuple[bool, str]:
    """(correct, what was understood) for one QA reply."""
    answerable = (inst.get("answerable") or {}).get(modality, True)
    if form == "mcq":
        p = parse_choice(reply, len(inst["choices"]))
        return (p.ok and p.value == inst["correct_choice"]), (p.value if p.ok else p.reason)
    ctx = {"valid_ids": [f["id"] for f in inst["scene"]["features"]]}
    if inst["answer_type"] == "ordering":
        ctx["ids"] = sorted(inst["answer"]) if isinstance(inst["answer"], list) else ctx["valid_ids"]
    p = parse_answer(reply, inst["answer_type"], **ctx)
    if p.refusal:
        return (not answerable) or inst["answer"] == REFUSAL, REFUSAL
    if not answerable:
        return False, f"answered {p.value!r} where a refusal was expected"
    if not p.ok:
        return False, p.reason
    return CATALOGUE[inst["relation"]].check_answer(inst, p.value), repr(p.value)


def check_edit(inst: dict, modality: str, reply: str) -> tuple[bool, str]:
    p = parse_edit(reply)
    if not p.ok:
        return False, p.reason
    edit = p.value
    scene = Scene.from_geojson(inst["scene"])
    if modality == "image":
        # Pixels: only validity is checked here.
        return "operations" in edit and bool(edit["operations"]), "valid pixel edit"
    try:
        res = apply_edit(scene, inst.get("target", "F0"), edit, tuple(inst["allowed_operations"]))
    except EditError as exc:
        return False, f"edit error: {exc}"
    if not res.changed:
        return False, "no-op edit"
    return all_hold(res.scene, inst["constraints"], initial=scene), json.dumps(edit["operations"])[:160]


def evaluate(
    bench: Path,
    agent_name: str,
    modality: str,
    tasks=("qa", "edit"),
    limit: int | None = None,
    relations: set[str] | None = None,
    forms=QA_FORMS,
) -> dict:
    """{"rows": [(task, relation, form, id, ok, detail)], "skipped": reason or None, "seconds": s}"""
    fn = get_agent(agent_name)
    rows, t0 = [], time.perf_counter()
    needs_map = modality in ("image", "together")
    if needs_map and not (bench / "maps").is_dir():
        return {
            "rows": [],
            "skipped": f"{bench}/maps absent: modality {modality} needs the map images",
            "seconds": 0.0,
        }
    for task in tasks:
        insts = [i for i in load(bench, task) if relations is None or i["relation"] in relations]
        if limit is not None:
            insts = insts[:limit]
        for inst in insts:
            png = (bench / "maps" / f"{inst['id']}.png").read_bytes() if needs_map else None
            for form in forms if task == "qa" else ("edit",):
                msgs = build_messages(inst, modality, form, png)
                reply = fn(msgs)
                ok, detail = (
                    check_qa(inst, form, modality, reply)
                    if task == "qa"
                    else check_edit(inst, modality, reply)
                )
                rows.append((task, inst["relation"], form, inst["id"], ok, detail))
    return {"rows": rows, "skipped": None, "seconds": time.perf_counter() - t0, "modality": modality}


def report(result: dict, show_misses: int = 30) -> str:
    if result["skipped"]:
        return f"skipped: {result['skipped']}"
    by = collections.defaultdict(lambda: [0, 0])
    for task, rel, form, _, ok, _ in result["rows"]:
        for key in ((task, form, rel), (task, form, "ALL")):
            by[key][0] += ok
            by[key][1] += 1
    out = []
    for task, form in sorted({(k[0], k[1]) for k in by}):
        rels = sorted(k[2] for k in by if k[:2] == (task, form) and k[2] != "ALL")
        cells = " ".join(f"{r}:{by[(task, form, r)][0]}/{by[(task, form, r)][1]}" for r in rels)
        ok, n = by[(task, form, "ALL")]
        note = " (pixel edits: validity only)" if task == "edit" and result.get("modality") == "image" else ""
        out.append(f"{task}/{form}: {ok}/{n} = {100.0 * ok / n:.2f} %{note}")
        out.append(f"  {cells}")
    misses = [r for r in result["rows"] if not r[4]]
    out.append(f"misses: {len(misses)} (time {result['seconds']:.1f} s)")
    for _task, _rel, form, iid, _, detail in misses[:show_misses]:
        out.append(f"  {iid} [{form}] {detail}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", required=True, type=Path)
    ap.add_argument("--agent", default="tools")
    ap.add_argument("--modality", default="geojson", choices=MODALITIES)
    ap.add_argument("--task", choices=("qa", "edit"))
    ap.add_argument("--relations", help="comma-separated relation codes")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--misses", type=int, default=30)
    a = ap.parse_args(argv)
    if not (a.bench / "manifest.json").is_file():
        print(f"error: {a.bench}: not a benchmark directory (no manifest.json)", file=sys.stderr)
        return 2
    res = evaluate(
        a.bench,
        a.agent,
        a.modality,
        (a.task,) if a.task else ("qa", "edit"),
        a.limit,
        set(a.relations.split(",")) if a.relations else None,
    )
    print(f"agent {a.agent}, modality {a.modality}, bench {a.bench}")
    print(report(res, a.misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
