"""Rebuild the real-reply corpus (tests/answers/real/*.jsonl.gz) from public evaluation repositories.

Not run by the tests: the corpus is committed. This script documents, and can repeat, how it was
sampled. Each source is read from a local bare git clone at the commit named in SOURCES.md:

    .venv/bin/python tests/answers/real/build.py --mirror SOURCE=GIT_DIR ...

with SOURCE one of the keys of SOURCES below. Sampling is seeded (SEED) and stratified by model
and kind, so the same clones give the same corpus byte for byte.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import re
import subprocess
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

SEED = 41
OUT = Path(__file__).parent

# --- MathVista (lupantech/MathVista, CC BY-SA 4.0) ----------------------------------------------
# Runs whose reply is prose. The "2shot_code" runs are left out: their reply is a Python program
# and the published extraction is that program's printed output, which no reader of text can see.
MATHVISTA_RUNS = {
    "bard/output_bard.json": "bard",
    "chatgpt/output_chatgpt.json": "chatgpt",
    "chatgpt/output_chatgpt_2shot_solution.json": "chatgpt-2shot-cot",
    "chatgpt/output_chatgpt_2shot_solution_use_ocr.json": "chatgpt-2shot-cot-ocr",
    "claude/output_claude.json": "claude-2",
    "claude/output_claude_2shot_solution.json": "claude-2-2shot-cot",
    "claude/output_claude_2shot_solution_use_ocr.json": "claude-2-2shot-cot-ocr",
    "gpt4/output_gpt4.json": "gpt-4",
    "gpt4/output_gpt4_2shot_solution.json": "gpt-4-2shot-cot",
    "gpt4/output_gpt4_2shot_solution_use_ocr.json": "gpt-4-2shot-cot-ocr",
    "idefics/output_idefics_9b_instruct.json": "idefics-9b-instruct",
    "instruct_blip2/output_instruct_blip2_vicuna_13b.json": "instructblip-vicuna-13b",
    "llama_adapter_v2/output_llama_adapter_v2.json": "llama-adapter-v2",
    "llava/output_llava_llama_2_13b.json": "llava-llama-2-13b",
    "llavar/output_llavar.json": "llavar",
    "minigpt4/output_minigpt4_llama2.json": "minigpt4-llama2",
    "mplugowl/output_mplugowl_7b_ft.json": "mplug-owl-7b",
}
MATHVISTA_PER_RUN = {"choice": 70, "integer": 60, "float": 20}
MATHVISTA_KIND = {("multi_choice", "text"): "choice", ("free_form", "integer"): "integer"}

# --- MMLU-Pro (TIGER-AI-Lab/MMLU-Pro, Apache-2.0) ------------------------------------------------
MMLU_PRO_RUNS = {
    "model_outputs_gemini-1.5-pro-002_5shots.zip": "gemini-1.5-pro-002",
    "model_outputs_gemini-1.5-flash-002_5shots.zip": "gemini-1.5-flash-002",
    "model_outputs_Meta-Llama-3_1-70B-Instruct_5shots.zip": "llama-3.1-70b-instruct",
    "model_outputs_Meta-Llama-3_1-8B_5shots.zip": "llama-3.1-8b",
    "model_outputs_Llama-2-7b-hf_5shots.zip": "llama-2-7b",
    "model_outputs_Mixtral-8x7B-Instruct-v0.1_5shots.zip": "mixtral-8x7b-instruct",
    "model_outputs_Mistral-7B-Instruct-v0.2_5shots.zip": "mistral-7b-instruct-v0.2",
    "model_outputs_Qwen1.5-72B-Chat_5shots.zip": "qwen1.5-72b-chat",
    "model_outputs_Yi-6b-Chat_5shots.zip": "yi-6b-chat",
    "model_outputs_Phi-3-mini-4k-instruct_5shots.zip": "phi-3-mini-4k-instruct",
    "model_outputs_c4ai-command-r-v01_5shots.zip": "command-r-v01",
    "model_outputs_jamba-1.5-large_5shots.zip": "jamba-1.5-large",
    "model_outputs_DeepSeek-Coder-V2_5shots.zip": "deepseek-coder-v2",
    "model_outputs_mathstral-7B_5shots.zip": "mathstral-7b",
}
MMLU_PRO_PER_RUN = 110
MMLU_PRO_NO_PRED = 20  # of those, at most this many replies the published regexes could not read

# --- GAOKAO-Bench (OpenLMLab/GAOKAO-Bench, Apache-2.0) -------------------------------------------
GAOKAO_FILES = [  # the single-answer multiple-choice sets
    "2010-2013_English_MCQs",
    "2010-2022_Biology_MCQs",
    "2010-2022_Chemistry_MCQs",
    "2010-2022_Chinese_Lang_and_Usage_MCQs",
    "2010-2022_History_MCQs",
    "2010-2022_Math_II_MCQs",
    "2010-2022_Math_I_MCQs",
    "2010-2022_Physics_MCQs",
    "2010-2022_Political_Science_MCQs",
]
GAOKAO_PER_FILE = 60
MAX_REPLY = 6000  # characters kept of a reply (longer ones are cut at a line end and marked)


def git_show(git_dir: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"HEAD:{path}"], check=True, capture_output=True
    ).stdout


def head_commit(git_dir: str) -> str:
    out = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], check=True, capture_output=True)
    return out.stdout.decode().strip()


FIELDS = ("source", "model", "id", "question", "options", "kind", "reply", "published", "gold")


def record(*values) -> dict:
    return dict(zip(FIELDS, values, strict=True))


def mathvista(git_dir: str, rng: random.Random) -> Iterator[dict]:
    for path, model in MATHVISTA_RUNS.items():
        data = json.loads(git_show(git_dir, f"results/{path}"))
        by_kind: dict[str, list[dict]] = defaultdict(list)
        for pid in sorted(data, key=int):
            item = data[pid]
            key = (item["question_type"], item["answer_type"])
            kind = MATHVISTA_KIND.get(key) or ("float" if key == ("free_form", "float") else None)
            reply = item.get("response")
            if kind and isinstance(reply, str) and reply.strip() and len(reply) <= MAX_REPLY:
                by_kind[kind].append(item)
        for kind, items in by_kind.items():
            for item in rng.sample(items, min(MATHVISTA_PER_RUN[kind], len(items))):
                yield record(
                    "mathvista",
                    model,
                    f"mathvista:{model}:{item['pid']}",
                    item["question"],
                    item["choices"] if kind == "choice" else None,
                    kind,
                    item["response"],
                    item.get("extraction"),
                    item["answer"],
                )


def mmlu_pro(git_dir: str, rng: random.Random) -> Iterator[dict]:
    for name, model in MMLU_PRO_RUNS.items():
        with zipfile.ZipFile(io.BytesIO(git_show(git_dir, f"eval_results/{name}"))) as zf:
            member = next(n for n in zf.namelist() if n.endswith(".json"))
            data = json.loads(zf.read(member))
        data = [d for d in data if isinstance(d, dict)]
        for d in data:  # API runs publish "model_outputs", local (vLLM) runs "generated_text"
            d["reply"] = d.get("model_outputs") or d.get("generated_text")
        usable = [d for d in data if isinstance(d["reply"], str) and d["reply"].strip()]
        usable = [d for d in usable if len(d["reply"]) <= MAX_REPLY]
        none = [d for d in usable if not d.get("pred")]
        some = [d for d in usable if d.get("pred")]
        picked = rng.sample(none, min(MMLU_PRO_NO_PRED, len(none)))
        picked += rng.sample(some, MMLU_PRO_PER_RUN - len(picked))
        for d in sorted(picked, key=lambda d: d["question_id"]):
            yield record(
                "mmlu-pro",
                model,
                f"mmlu-pro:{model}:{d['question_id']}",
                d["question"],
                d["options"],
                "choice",
                d["reply"],
                d.get("pred"),
                d["answer"],
            )


_GAOKAO_OPTION = re.compile(r"(?:^|\s|\n)([A-D])\s*[.．、:：]\s*")


def gaokao_options(question: str) -> list[str] | None:
    """The four option texts of a GAOKAO question, when its text lists A-D once each in order."""
    marks = list(_GAOKAO_OPTION.finditer(question))
    letters = [m.group(1) for m in marks]
    if letters[-4:] != ["A", "B", "C", "D"]:
        return None
    marks = marks[-4:]
    ends = [m.start() for m in marks[1:]] + [len(question)]
    return [question[m.end() : e].strip() for m, e in zip(marks, ends, strict=True)]


def gaokao(git_dir: str, rng: random.Random) -> Iterator[dict]:
    for stem in GAOKAO_FILES:
        raw = git_show(git_dir, f"Results/gpt_4_0314_obj/gpt-4-0314_{stem}.json")
        examples = json.loads(raw)["example"]
        # one question, one correct letter (some physics items want several: "AC" -- left out)
        items = [
            e
            for e in examples
            if len(e["standard_answer"]) == 1
            and len(e["standard_answer"][0]) == 1
            and len(e["model_answer"]) <= 1
            and all(len(a) == 1 for a in e["model_answer"])
        ]
        empty = [e for e in items if not e["model_answer"]]
        rest = [e for e in items if e["model_answer"]]
        picked = empty + rng.sample(rest, min(GAOKAO_PER_FILE - len(empty), len(rest)))
        for e in sorted(picked, key=lambda e: e["index"]):
            yield record(
                "gaokao-bench",
                "gpt-4-0314",
                f"gaokao-bench:{stem}:{e['index']}",
                e["question"],
                gaokao_options(e["question"]),
                "choice",
                e["model_output"],
                e["model_answer"][0] if e["model_answer"] else None,
                e["standard_answer"][0],
            )


SOURCES: dict[str, Callable[[str, random.Random], Iterator[dict]]] = {
    "mathvista": mathvista,
    "mmlu-pro": mmlu_pro,
    "gaokao-bench": gaokao,
}


def write(source: str, records: list[dict]) -> Path:
    path = OUT / f"{source}.jsonl.gz"
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        for rec in records:
            gz.write((json.dumps(rec, ensure_ascii=False) + "\n").encode())
    path.write_bytes(buf.getvalue())
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", action="append", default=[], help="SOURCE=GIT_DIR (a bare clone)")
    args = ap.parse_args()
    for spec in args.mirror:
        source, git_dir = spec.split("=", 1)
        rng = random.Random(f"{SEED}:{source}")
        records = list(SOURCES[source](git_dir, rng))
        path = write(source, records)
        print(f"{source}: {len(records)} records from {head_commit(git_dir)} -> {path}")


if __name__ == "__main__":
    main()
