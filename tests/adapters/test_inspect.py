"""The inspect_ai task (scoring/adapters/inspect_task.py), run by the real inspect_ai against
agents served over loopback: every sample gets the verdict `spatialgap run` + score gives it,
images included (a chance agent seeded by the texts and image bytes it reads: equal verdicts
mean equal prompts and maps), with accuracy and stderr metrics and .eval logs `inspect view` reads."""

from __future__ import annotations

import json
import subprocess

from tests.adapters.helpers import REPO, Served, adapters_env, adapters_python, our_verdicts

CASES = [  # (agent, task, input type, form)
    ("tools", "qa", "geojson", "open"),
    ("test-content-chance", "qa", "image", "mcq"),
    ("tools", "edit", "geojson", "edit"),
    ("test-content-chance", "edit", "image", "edit"),
]
SCRIPT = r"""
import json, os, sys
from inspect_ai import eval as inspect_eval
from scoring.adapters.inspect_task import spatialgap
bench, log_dir, cases = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
out = {"verdicts": {}, "metrics": []}
for url, agent, task, modality, form in cases:
    os.environ["SG_BASE_URL"], os.environ["SG_API_KEY"] = url, "unused-on-loopback"
    (log,) = inspect_eval(spatialgap(bench=bench, task=task, modality=modality, form=form),
                          model=f"openai-api/sg/{agent}", log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    out["metrics"].append(sorted(log.results.scores[0].metrics))
    for s in log.samples:
        score = next(iter(s.scores.values()))
        out["verdicts"][f"{s.id}|{modality}"] = [score.value, score.metadata["verdict"]]
import scoring
out["scoring"] = scoring.__file__
print(json.dumps(out))
"""


def test_inspect_ai_gives_every_sample_our_verdict(small_bench, tmp_path):
    python = adapters_python()
    served = Served("tools", "test-content-chance")
    try:
        cases = [[served.url(a), a, t, m, f] for a, t, m, f in CASES]
        r = subprocess.run(
            [str(python), "-c", SCRIPT, str(small_bench), str(tmp_path / "logs"), json.dumps(cases)],
            capture_output=True,
            text=True,
            timeout=600,
            env=adapters_env(),
        )
        assert r.returncode == 0, r.stderr[-3000:]
        theirs = json.loads(r.stdout.strip().splitlines()[-1])
        ours = our_verdicts(small_bench, served, CASES, tmp_path / "ours")
    finally:
        served.close()
    assert theirs["scoring"] == str(REPO / "scoring" / "__init__.py")  # the checkout's code
    verdicts = {k: v for k, (_, v) in theirs["verdicts"].items()}
    assert verdicts == ours
    # every answerable sample (ids below 900) and the unanswerable variants built beside them
    answerable = [k for k in ours if int(k.split("|")[0].rsplit("-", 1)[1]) < 900]
    assert len(answerable) == 8 + 8 + 4 + 4 and len(ours) > len(answerable)
    correct = {"correct", "correct_refusal"}
    assert all((value == "C") == (v in correct) for value, v in theirs["verdicts"].values())
    assert {"correct", "wrong"} <= set(verdicts.values())
    assert all({"accuracy", "stderr"} <= set(m) for m in theirs["metrics"])
    assert len(list((tmp_path / "logs").glob("*.eval"))) == len(CASES)  # what `inspect view` opens
