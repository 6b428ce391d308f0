"""Walk-through: a 29th relation over existing measures is one new module (plus its name in
`scoring.relations.MODULES`). Nothing else is edited: the builder, the relation reference, the
tools agent (through the relation's Solver), the chance agent and the scorer pick it up from the
catalogue. Run in a fresh interpreter, since registering it changes the catalogue."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# The whole extension: what a contributor writes in scoring/relations/<module>.py.
EXTENSION = """
from scoring.constraints.wording import Wording
from scoring.relations.base import Member, Solver, relation
from scoring.relations.metric import _numeric_qa, members_near
from scoring.vocab import AnswerType, Family

Q_FARTHEST = Wording("How far is the farthest point of {a} from {b} (the Hausdorff distance), in metres?")


@relation(
    "M99",
    "Farthest-point distance",
    Family.METRIC,
    definition="The Hausdorff distance between A and B in metres (ST_HausdorffDistance). Tolerance 1 m.",
    question_forms="How far is the farthest point of F0 from F1 (the Hausdorff distance), in metres?",
    questions=(Q_FARTHEST,),
    answer_type=AnswerType.DISTANCE,
    solver=Solver("pair", "hausdorff"),
    distractor_rule="Adjacent numeric values, as M08.",
    edit_constraints="None: QA only.",
    anchor_kinds=("building",),
)
class FarthestPoint:
    @staticmethod
    def qa(ctx, anchor):
        other = members_near(ctx, anchor, ("building",), 150, lo=5)
        if not other:
            return None
        members = [Member.of(anchor), Member.of(other[0])]
        question = Q_FARTHEST.render(a="F0", b="F1")
        args = ("F0", "F1")
        return _numeric_qa(ctx, members, "hausdorff_distance", args, question, AnswerType.DISTANCE, " m")

    @staticmethod
    def edit(ctx, anchor):
        return None
"""

SCRIPT = """
import json, sys, types
from pathlib import Path
ext = types.ModuleType("scoring.relations.farthest")
exec(compile(sys.argv[2], "farthest.py", "exec"), ext.__dict__)
sys.modules[ext.__name__] = ext

from scoring.build.builder import build_benchmark
from scoring.formats.benchmark import Benchmark
from scoring.relations import CATALOGUE
from scoring.relations.reference import render
from scoring.runner.agents.registry import get_agent
from scoring.runner.prompts import build_messages
from scoring.score.verdicts import score_qa

out = Path(sys.argv[1])
build_benchmark(None, out, n_qa=4, n_edit=0, relations=["M99"], jobs=1, progress=False)
bench = Benchmark.open(out)
verdicts = []
for inst in bench.all_instances():
    for form in ("open", "mcq"):
        reply = get_agent("tools")(build_messages(inst, "geojson", form, None))
        verdicts.append(score_qa(inst, reply, form=form).verdict)
print(json.dumps({"relations": len(CATALOGUE), "n": len(bench.all_instances()),
                  "verdicts": verdicts, "in_reference": "M99" in render()}))
"""


def test_a_new_relation_needs_only_its_module(tmp_path):
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "bench"), textwrap.dedent(EXTENSION)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["relations"] == 29
    assert result["n"] == 5  # 4 and the unanswerable variant every relation gets (a feature missing)
    assert set(result["verdicts"]) == {"correct", "correct_refusal"}, result
    assert result["in_reference"]
