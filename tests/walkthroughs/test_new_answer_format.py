"""Walk-through: a new answer format touches two source files, its name in
`scoring.vocab.AnswerType` and its record in `scoring/answers/formats.py`. The reader, the
catalogue's checker, the prompts' instructions, the agents' reading of them and chance's guess
all follow. Shown on a copy of the package with exactly those two files edited."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import scoring

VOCAB_EDIT = ('    EDIT = "edit"\n', '    EDIT = "edit"\n    HEIGHT = "height"\n')
FORMAT_RECORD = """
answer_format(
    AnswerType.HEIGHT,
    "height",
    'Answer with a single height in metres above the ground (no unit), e.g. "Answer: 12.5".',
    read=lambda t, c: parse_number(t, "distance"),
    check=_within(0.5),
    guess=lambda rng, ids, choices: f"{rng.uniform(2, 80):.1f}",
    tolerance=0.5,
    unit="m",
)
"""

SCENARIO = """
import json, random
from scoring.answers import parse_answer
from scoring.relations.base import TOLERANCES, UNITS, check_answer
from scoring.runner.agents.chance import chance
from scoring.runner.agents.prompt_view import parse_prompt
from scoring.runner.prompts import ANSWER_INSTRUCTIONS, answer_category
instruction = ANSWER_INSTRUCTIONS[answer_category("height")]
messages = [{"role": "system", "content": "x"},
            {"role": "user", "content": "Question: How tall is F1?\\n\\n" + instruction}]
print(json.dumps({
    "read": parse_answer("It is about 12.5 m tall.", "height").value,
    "right": check_answer("height", 12.0, 12.4), "wrong": check_answer("height", 12.0, 12.6),
    "tolerance": TOLERANCES["height"], "unit": UNITS["height"],
    "agent_reads": parse_prompt(messages).answer_category,
    "chance": parse_answer(chance(messages), "height").ok,
}))
"""


def test_a_new_answer_format_is_its_name_and_one_record(tmp_path):
    copy = tmp_path / "scoring"
    shutil.copytree(Path(scoring.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    vocab = copy / "vocab.py"
    assert VOCAB_EDIT[0] in vocab.read_text()
    vocab.write_text(vocab.read_text().replace(*VOCAB_EDIT))
    formats = copy / "answers" / "formats.py"
    formats.write_text(formats.read_text() + FORMAT_RECORD)
    # resources/ beside the copy, where scoring.paths looks
    (tmp_path / "resources").symlink_to(Path(scoring.__file__).resolve().parents[1] / "resources")
    r = subprocess.run(
        [sys.executable, "-c", SCENARIO],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    assert seen == {
        "read": 12.5,
        "right": True,
        "wrong": False,
        "tolerance": 0.5,
        "unit": "m",
        "agent_reads": "height",
        "chance": True,
    }
