"""One agent through `spatialgap evaluate`, the inspect_ai task and the lm-eval tasks, over every
task, form and input type each harness takes (lm-eval: the text input type, geojson): every
sample gets the same verdict. The agent is chance seeded by all it reads, each image's `detail`
included, and it answers half the first edit turns with prose, so run's corrective turn decides
those: a harness that sent other messages, another detail, or no corrective turn, would give
other verdicts."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import scoring
from scoring.score.results import load_results
from scoring.vocab import MODALITIES, Modality
from tests.adapters.helpers import REPO, Served, adapters_env, adapters_python
from tests.evaluate.sweep_helpers import models_toml

AGENT = "test-strict-chance"
CASES = [  # (task, form) per input type
    (str(m), task, form)
    for m in MODALITIES
    for task, form in (("qa", "open"), ("qa", "mcq"), ("edit", "edit"))
]
INSPECT = r"""
import json, os, sys
from inspect_ai import eval as inspect_eval
from spatialgap.inspect_tasks import qa, edit
bench, log_dir, url, agent = sys.argv[1:5]
cases = json.loads(sys.argv[5])
os.environ["SG_BASE_URL"], os.environ["SG_API_KEY"] = url, "unused-on-loopback"
tasks = [qa(bench=bench, modality=m, form=f) if t == "qa" else edit(bench=bench, modality=m)
         for m, t, f in cases]
out = {}
for (modality, _, _), log in zip(cases, inspect_eval(tasks, model=f"openai-api/sg/{agent}", log_dir=log_dir,
                                                      display="none", max_tasks=4)):
    assert log.status == "success", log.error
    for s in log.samples:
        out[f"{s.id}|{modality}"] = next(iter(s.scores.values())).metadata["verdict"]
print(json.dumps(out))
"""
LM_EVAL = r"""
import json, sys
import lm_eval
from lm_eval.tasks import TaskManager
import scoring.adapters.lm_eval.model
from scoring.score.verdicts import score_prediction
bench, include, url, agent = sys.argv[1:5]
tasks = ["spatialgap_qa_open", "spatialgap_qa_mcq", "spatialgap_edit"]
res = lm_eval.simple_evaluate(
    model="spatialgap-chat-completions",
    model_args=f"model={agent},base_url={url}/chat/completions,num_concurrent=2,max_retries=1,tokenized_requests=False",
    tasks=tasks, task_manager=TaskManager(include_path=include, metadata={"bench": bench}),
    apply_chat_template=True, log_samples=True,
)
out = {}
for t in tasks:
    for s in res["samples"][t]:
        doc, reply = s["doc"], s["resps"][0][0]
        inst = json.loads(doc["instance"])
        record = {"task": inst["task"], "form": doc["form"], "modality": "geojson", "status": "ok",
                  "text": reply}
        out[f'{doc["id"]}|{doc["form"]}|geojson'] = score_prediction(inst, record, bench).verdict
print(json.dumps(out))
"""


def _adapters(script: str, *args: str) -> dict:
    r = subprocess.run(
        [str(adapters_python()), "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=900,
        env={**adapters_env(), "OPENAI_API_KEY": "unused-on-loopback"},
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_evaluate_inspect_and_lm_eval_give_every_sample_the_same_verdict(small_bench, tmp_path):
    adapters_python()
    bench = tmp_path / "bench"
    shutil.copytree(small_bench, bench)  # evaluate draws the map sets into it
    served = Served(AGENT)
    try:
        url = served.url(AGENT)
        config = models_toml(
            tmp_path / "models.toml",
            {
                "strict": {
                    "kind": "openai",
                    "base_url": url,
                    "model": AGENT,
                    "modalities": [str(m) for m in MODALITIES],
                }
            },
        )
        rec = scoring.run_evaluation(
            tmp_path / "ev", bench=bench, agents=(), config=config, modalities=[str(m) for m in MODALITIES]
        )
        assert rec["failed_samples"] == {} and not rec["stopped"]
        _, rows = load_results(tmp_path / "ev" / "results")
        ours = {f"{r['id']}|{r['form']}|{r['modality']}": r["verdict"] for r in rows}
        inspect = _adapters(INSPECT, str(bench), str(tmp_path / "logs"), url, AGENT, json.dumps(CASES))
        lm_eval = _adapters(LM_EVAL, str(bench), str(REPO / "scoring" / "adapters" / "lm_eval"), url, AGENT)
    finally:
        served.close()
    # pixel edits (the image input types' raster form) are evaluate's alone: inspect's edit task
    # sends the operations form, as `run --task edit` does by default
    ours_inspect = {k: v for k, v in ours.items() if k.split("|")[1] != "edit_raster"}
    assert inspect == ours_inspect
    assert lm_eval == {k: v for k, v in ours.items() if k.endswith("|geojson")}
    assert {k.split("|")[2] for k in inspect} == {str(m) for m in MODALITIES}
    corrective = [
        json.loads(line)
        for p in (tmp_path / "ev" / "runs").rglob("predictions.jsonl")
        for line in p.read_text().splitlines()
        if '"corrective"' in line
    ]
    assert len(corrective) >= len(MODALITIES)  # the corrective turn decided edits in every input type
    print(f"agreement: {len(inspect)} samples evaluate = inspect_ai, {len(lm_eval)} = lm-eval")
    assert {Modality(k.split("|")[2]) for k in lm_eval} == {Modality.GEOJSON}


def _installed(*cmd: str, **env: str) -> subprocess.CompletedProcess:
    """A command of the adapters' venv on its installed package (no checkout on the path)."""
    clean = {k: v for k, v in adapters_env().items() if k != "PYTHONPATH"}
    return subprocess.run(
        list(cmd), capture_output=True, text=True, timeout=600, cwd="/", env={**clean, **env}
    )


def test_inspect_and_lm_eval_find_the_tasks_of_the_installed_package(small_bench, tmp_path):
    venv_bin = adapters_python().parent
    served = Served("tools")
    try:
        r = _installed(
            str(venv_bin / "inspect"), "eval", "spatialgap/qa", "-T", f"bench={small_bench}", "--limit", "2",
            "--model", "openai-api/sg/tools", "--log-dir", str(tmp_path / "logs"), "--display", "none",
            SG_BASE_URL=served.url("tools"), SG_API_KEY="unused-on-loopback",
        )  # fmt: skip
    finally:
        served.close()
    assert r.returncode == 0, r.stderr[-2000:]
    assert len(list((tmp_path / "logs").glob("*.eval"))) == 1
    r = _installed(str(venv_bin / "python"), "-m", "scoring.adapters.lm_eval", "--include_path")
    tasks_dir = r.stdout.strip()
    assert r.returncode == 0 and "site-packages" in tasks_dir, r.stderr[-2000:]
    assert {p.name for p in Path(tasks_dir).glob("*.yaml")} >= {
        "spatialgap_edit.yaml",
        "spatialgap_qa_open.yaml",
    }
