"""A benchmark is what its manifest says (issue 27, items 7 and 11): a hand-edited qa.jsonl whose
SHA-256 no longer matches manifest.json is refused by the real `spatialgap run` and `score`
with one line, before anything is written; a benchmark whose manifest records no hashes has
its scenes checked instead (a 3-point ring, an unclosed ring, a 1-point line, 1e300). The
model is a built-in agent served over loopback HTTP by the real agent server."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from scoring.build.builder import build_benchmark
from tests.conftest import VENV_BIN


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("integrity") / "bench"
    build_benchmark(None, out, n_qa=2, n_edit=1, relations=["M01", "D01"], jobs=1, progress=False)
    return out


def _cmd(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(VENV_BIN / "spatialgap"), *args], capture_output=True, text=True, timeout=300)


def _run(bench: Path, url: str, out: Path) -> subprocess.CompletedProcess:
    return _cmd(
        "run", "--bench", str(bench), "--endpoint", url, "--model", "chance", "--modality", "geojson",
        "--task", "qa", "--out", str(out), "--no-progress",
    )  # fmt: skip


def _one_line(p: subprocess.CompletedProcess, command: str) -> str:
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"spatialgap {command}: error: "), p.stderr
    return lines[0]


def _edit_first(path: Path, change) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    change(first)
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_hand_edited_task_file_is_refused_by_run_and_score(bench, chance, tmp_path):
    copy = tmp_path / "bench"
    shutil.copytree(bench, copy)
    run = tmp_path / "run"
    assert _run(copy, chance.base_url, run).returncode == 0  # the intact copy runs ...
    ok = _cmd(
        "score", "--bench", str(copy), "--run", str(run), "--out", str(tmp_path / "ok"), "--no-progress"
    )
    assert ok.returncode == 0, ok.stderr  # ... and scores

    def flip(inst: dict) -> None:  # what a hand edit does: another expected answer
        inst["answer"] = inst["answer"] * 2

    _edit_first(copy / "qa.jsonl", flip)
    res = tmp_path / "results"
    p = _cmd("score", "--bench", str(copy), "--run", str(run), "--out", str(res), "--no-progress")
    line = _one_line(p, "score")
    assert f"{copy / 'qa.jsonl'}: changed since the build" in line and "manifest.json records" in line
    assert not res.exists()
    run2 = tmp_path / "run2"
    line = _one_line(_run(copy, chance.base_url, run2), "run")
    assert "qa.jsonl: changed since the build" in line
    assert not run2.exists()


def test_a_missing_task_file_the_manifest_records_is_refused(bench, chance, tmp_path):
    copy = tmp_path / "bench"
    shutil.copytree(bench, copy)
    (copy / "qa.jsonl").unlink()
    line = _one_line(_run(copy, chance.base_url, tmp_path / "run"), "run")
    assert "qa.jsonl: missing (manifest.json records its SHA-256)" in line


BAD_SCENE_GEOMETRY = {
    "3-point ring": (
        {"type": "Polygon", "coordinates": [[[0, 0], [10, 0], [0, 0]]]},
        "invalid geometry (Too few points",
    ),
    "unclosed 2-point ring": ({"type": "Polygon", "coordinates": [[[0, 0], [10, 0]]]}, "invalid geometry"),
    "1-point line": ({"type": "LineString", "coordinates": [[0, 0]]}, "invalid geometry"),
    "1e300": ({"type": "Point", "coordinates": [1e300, 0]}, "coordinate out of range"),
    "not a number": ({"type": "Point", "coordinates": ["x", 0]}, "invalid geometry"),
}


@pytest.mark.parametrize("case", list(BAD_SCENE_GEOMETRY))
def test_a_broken_scene_without_recorded_hashes_is_one_line(bench, chance, tmp_path, case):
    geometry, needle = BAD_SCENE_GEOMETRY[case]
    copy = tmp_path / "bench"
    shutil.copytree(bench, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    del manifest["files"]  # a benchmark made by hand: no hash vouches for its scenes
    (copy / "manifest.json").write_text(json.dumps(manifest))
    first = json.loads((copy / "qa.jsonl").read_text().splitlines()[0])

    def damage(inst: dict) -> None:
        inst["scene"]["features"][1]["geometry"] = geometry

    _edit_first(copy / "qa.jsonl", damage)
    fid = first["scene"]["features"][1]["id"]
    run = tmp_path / "run"
    line = _one_line(_run(copy, chance.base_url, run), "run")
    assert f"{copy / 'qa.jsonl'}: instance {first['id']}: feature {fid}: {needle}" in line, line
    assert not run.exists()
