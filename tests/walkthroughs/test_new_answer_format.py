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
import scoring.vocab

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


def _with_height(tmp_path: Path, scenario: str) -> dict:
    """Run `scenario` on a copy of the package with the HEIGHT format added; its last line's JSON."""
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
        [sys.executable, "-c", scenario],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_new_answer_format_is_its_name_and_one_record(tmp_path):
    seen = _with_height(tmp_path, SCENARIO)
    assert seen == {
        "read": 12.5,
        "right": True,
        "wrong": False,
        "tolerance": 0.5,
        "unit": "m",
        "agent_reads": "height",
        "chance": True,
    }


CHECKSUMS = """
import json
from scoring.runner import prompts
from scoring.vocab import MODALITIES
out = {}
for m in MODALITIES:
    for form in ("open", "mcq"):
        for cat in sorted(prompts.ANSWER_INSTRUCTIONS) if form == "open" else ["choice"]:
            info = prompts.template_info("qa", m, form, category=cat)
            out[f"{info.name}/{cat}"] = [info.sha256, info.legacy_sha256]
    for reply in ("operations", "pixel_geometry") if m == "image" else ("operations",):
        info = prompts.template_info("edit", m, "edit", reply_form=reply)
        out[info.name] = [info.sha256, info.legacy_sha256]
print(json.dumps(out))
"""


def test_a_new_answer_format_changes_no_existing_request_key(tmp_path):
    """A template's checksum (part of every request key) covers only the instructions it sends:
    with a format added, every key of the formats there before is the same, so their journals
    resume. The checksum of the versions before #26 hashed every instruction: it changes, so a
    journal of those versions is then asked again rather than matched under a wrong key."""
    before = json.loads(
        subprocess.run([sys.executable, "-c", CHECKSUMS], capture_output=True, text=True, check=True).stdout
    )
    after = _with_height(tmp_path, CHECKSUMS)
    assert set(after) - set(before) == {f"qa-open-{m}/height" for m in scoring.vocab.MODALITIES}
    assert {k: v[0] for k, v in before.items()} == {k: after[k][0] for k in before}
    assert all(after[k][1] != v[1] for k, v in before.items())
