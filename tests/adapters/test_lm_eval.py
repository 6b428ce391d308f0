"""The lm-eval tasks (scoring/adapters/lm_eval/), run by the real lm-eval against agents served
over loopback (its local-chat-completions model, our prompts through its chat template): every
document gets the verdict `spatialgap run` + score gives the same sample, and acc comes with
its stderr."""

from __future__ import annotations

import json
import subprocess

from tests.adapters.helpers import REPO, Served, adapters_env, adapters_python, our_verdicts

TASKS = {
    "spatialgap_qa_open": ("qa", "open"),
    "spatialgap_qa_mcq": ("qa", "mcq"),
    "spatialgap_edit": ("edit", "edit"),
}
SCRIPT = r"""
import json, sys
import lm_eval
from lm_eval.tasks import TaskManager
bench, include = sys.argv[1:3]
tasks, agents = json.loads(sys.argv[3]), json.loads(sys.argv[4])
manager = TaskManager(include_path=include, metadata={"bench": bench})
out = {}
for model, url in agents.items():  # one process for both agents: lm-eval takes seconds to import
    res = lm_eval.simple_evaluate(
        model="local-chat-completions",
        model_args=f"model={model},base_url={url}/chat/completions,num_concurrent=2,max_retries=1,"
        "tokenized_requests=False",
        tasks=tasks,
        task_manager=manager,
        apply_chat_template=True,
        log_samples=True,
    )
    acc = {f'{s["doc"]["id"]}|{s["doc"]["form"]}': s["acc"] for t in tasks for s in res["samples"][t]}
    out[model] = {"acc": acc, "results": {t: res["results"][t] for t in tasks}}
print(json.dumps(out, default=str))
"""


def test_lm_eval_gives_every_document_our_verdict(small_bench, tmp_path):
    python = adapters_python()
    agents = ("tools", "test-content-chance")
    served = Served(*agents)
    theirs: dict[str, float] = {}
    results = {}
    try:
        r = subprocess.run(
            [str(python), "-c", SCRIPT, str(small_bench), str(REPO / "scoring" / "adapters" / "lm_eval"),
             json.dumps(list(TASKS)), json.dumps({a: served.url(a) for a in agents})],
            capture_output=True, text=True, timeout=600,
            env={**adapters_env(), "OPENAI_API_KEY": "unused-on-loopback"},
        )  # fmt: skip
        assert r.returncode == 0, r.stderr[-3000:]
        out = json.loads(r.stdout.strip().splitlines()[-1])
        for name in agents:
            theirs.update({f"{k}|geojson|{name}": v for k, v in out[name]["acc"].items()})
            results[name] = out[name]["results"]
        cases = [(name, task, "geojson", form) for name in agents for task, form in TASKS.values()]
        ours: dict[str, str] = {}
        for name in agents:  # one results directory per agent: verdict rows keyed by sample
            mine = our_verdicts(small_bench, served, [c for c in cases if c[0] == name], tmp_path / name)
            ours.update({f"{k}|{name}": v for k, v in mine.items()})
    finally:
        served.close()
    correct = {"correct", "correct_refusal"}
    assert len(theirs) == len(ours)
    # every answerable document (ids below 900) and the unanswerable variants built beside them
    answerable = [k for k in ours if int(k.split("|")[0].rsplit("-", 1)[1]) < 900]
    assert len(answerable) == 2 * (8 + 8 + 4) and len(ours) > len(answerable)
    assert theirs == {k: float(v in correct) for k, v in ours.items()}
    assert 0 < sum(theirs.values()) < len(theirs)  # both verdicts occur
    for per_task in results.values():
        for r in per_task.values():
            assert "acc,none" in r and "acc_stderr,none" in r
