"""`spatialgap frieda-run` checks every map before anything is created or sent (issue 27, item 7):
a file that is no image, a NUL byte or a 5,000-character image name is one line naming the
question file and the question, exit code 2, and the output folder is never created. The
endpoint is a loopback port nothing is sent to (the check comes first)."""

from __future__ import annotations

import json
import subprocess
import zlib
from pathlib import Path

import pytest

from tests.conftest import VENV_BIN


def _png() -> bytes:
    """A real 1 × 1 PNG (signature, IHDR, IDAT, IEND)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    ihdr = (1).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\0\0\0\0"))
        + chunk(b"IEND", b"")
    )


def _dataset(root: Path, image_name: str, image_bytes: bytes | None) -> Path:
    (root / "imgs" / "doc").mkdir(parents=True)
    (root / "imgs" / "doc" / "ok.png").write_bytes(_png())
    if image_bytes is not None:
        (root / "imgs" / image_name).write_bytes(image_bytes)
    questions = [
        {"question_ref": "q1", "question_text": "Which?", "expected_answer": "a", "answer_type": "textual",
         "images": ["doc/ok.png"]},
        {"question_ref": "q2", "question_text": "Where?", "expected_answer": "b", "answer_type": "textual",
         "images": ["doc/ok.png", image_name]},
    ]  # fmt: skip
    (root / "questions.json").write_text(json.dumps(questions))
    return root


CASES = {
    "text file as a map": (
        "doc/notes.png",
        b"these are my notes, not a map\n",
        "not a PNG, JPEG, GIF or WebP image",
    ),
    "empty file": ("doc/empty.png", b"", "not a PNG, JPEG, GIF or WebP image"),
    "a directory": ("doc", None, "Is a directory"),
    "NUL byte": ("doc/a\0b.png", None, "a NUL byte in the name"),
    "5,000 characters": ("doc/" + "m" * 5000 + ".png", None, "File name too long"),
    "missing": ("doc/absent.png", None, "not found under"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_map_is_one_line_before_any_output_folder(tmp_path, case):
    name, data, needle = CASES[case]
    ds = _dataset(tmp_path / "frieda", name, data)
    out = tmp_path / "out"
    p = subprocess.run(
        [str(VENV_BIN / "spatialgap"), "frieda-run", "--dataset", str(ds), "--endpoint", "http://127.0.0.1:9/v1",
         "--model", "m", "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spatialgap frieda-run: error: "), p.stderr
    assert f"{ds / 'questions.json'}: question q2: image " in lines[0], lines[0]
    assert needle in lines[0] and len(lines[0]) < 400, lines[0]
    assert not out.exists()
