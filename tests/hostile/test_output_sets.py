"""Outputs written as one unit, one writer per output directory, and commands that resume: a
full disk under `score` keeps the previous results whole, readers refuse parts of two sets, a
second command on a locked --out is told to wait, a rebuild writes the same manifest, and an
interrupted `build` resumes drawing its maps."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scoring.runner.agents import start_server
from scoring.support.lock import lock_output
from tests.conftest import VENV_BIN
from tests.hostile.helpers import one_line_error, spatialgap

SMALL = ("--relations", "M01", "--qa", "1", "--edit", "1", "--jobs", "1", "--no-progress")


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A benchmark and two runs of the chance agent on it (geojson QA, geojson editing)."""
    root = tmp_path_factory.mktemp("sets")
    bench = root / "bench"
    assert spatialgap("build", "--out", str(bench), *SMALL, "--no-render").returncode == 0
    srv, _ = start_server("chance")
    try:
        for task in ("qa", "edit"):
            proc = spatialgap(
                "run", "--bench", str(bench), "--endpoint", srv.base_url, "--model", "chance",
                "--modality", "geojson", "--task", task, "--out", str(root / task), "--no-progress",
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr[-2000:]
    finally:
        srv.shutdown()
        srv.server_close()
    return bench, root / "qa", root / "edit"


def _score(bench: Path, out: Path, *runs: Path) -> list[str]:
    return ["score", "--bench", str(bench), *(a for r in runs for a in ("--run", str(r))), "--out", str(out),
            "--no-progress"]  # fmt: skip


def test_a_full_disk_under_score_keeps_the_previous_results_whole(scored, tmp_path):
    """On a 32 KiB tmpfs the first score (7 pages) fits; the second one's summary does not. It
    used to replace verdicts.jsonl first, leaving the new verdicts beside the old summary (which
    `report` read with rc 0). The whole set is now written aside first: the old set stays."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) (util-linux) to mount a small tmpfs")
    bench, qa, edit = scored
    disk, keep = tmp_path / "disk", tmp_path / "keep"
    disk.mkdir()
    exe = str(VENV_BIN / "spatialgap")
    first = " ".join(f'"{a}"' for a in [exe, *_score(bench, disk / "r", qa)])
    second = " ".join(f'"{a}"' for a in [exe, *_score(bench, disk / "r", qa, edit)])
    script = (
        f'mount -t tmpfs -o size=32k tmpfs "{disk}" || exit 97; '
        f'{first} 2>"{tmp_path}/err1" || exit 98; '
        f'{second} 2>"{tmp_path}/err2"; echo $? >"{tmp_path}/rc2"; cp -a "{disk}/r" "{keep}"'
    )
    root = [] if os.geteuid() == 0 else ["--map-root-user"]
    p = subprocess.run(
        ["unshare", *root, "--mount", "sh", "-c", script], capture_output=True, text=True, timeout=300
    )
    if p.returncode == 97:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    assert p.returncode == 0, (tmp_path / "err1").read_text()[-2000:]
    assert (tmp_path / "rc2").read_text().strip() == "2"
    err = (tmp_path / "err2").read_text().strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and str(disk / "r") in err[0], err
    summary = json.loads((keep / "summary.json").read_text())
    assert [Path(r["path"]).name for r in summary["runs"]] == ["qa"]  # the first score's, whole
    verdicts = (keep / "verdicts.jsonl").read_text().splitlines()
    assert {json.loads(line)["task"] for line in verdicts} == {"qa"}  # not the second score's
    assert not [f for f in os.listdir(keep) if f.endswith(".tmp")]
    report = spatialgap("report", str(keep), "--out", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stderr[-2000:]


def test_a_reader_refuses_results_whose_parts_are_from_two_scores(scored, tmp_path):
    bench, qa, edit = scored
    one, two = tmp_path / "one", tmp_path / "two"
    assert spatialgap(*_score(bench, one, qa)).returncode == 0
    assert spatialgap(*_score(bench, two, qa, edit)).returncode == 0
    shutil.copy(two / "verdicts.jsonl", one / "verdicts.jsonl")
    for command in (["report", str(one), "--out", str(tmp_path / "r.html")], ["browse", str(one)]):
        proc = spatialgap(*command)
        assert proc.returncode == 2
        line = one_line_error(proc, command[0])
        assert str(one) in line and "not from the same score" in line


@pytest.mark.parametrize("command", ["evaluate", "build", "score", "report"])
def test_a_second_command_on_a_locked_output_is_told_to_wait(scored, tmp_path, command):
    """Two `evaluate` on one --out both rebuilt the benchmark and ran under each other, wedging
    the directory; every output directory is now held by one command at a time."""
    bench, qa, _ = scored
    out = tmp_path / "out"
    if command == "report":
        assert spatialgap(*_score(bench, tmp_path / "results", qa)).returncode == 0
    args = {
        "evaluate": ["evaluate", "--out", str(out), "--agents", "chance", "--no-progress"],
        "build": ["build", "--out", str(out), *SMALL],
        "score": _score(bench, out, qa),
        "report": ["report", str(tmp_path / "results"), "--out", str(out / "report.html")],
    }[command]
    with lock_output(out, command, beside=command == "build"):
        proc = spatialgap(*args)
    assert proc.returncode == 2
    line = one_line_error(proc, command)
    assert f"another {command} (pid {os.getpid()}) is writing this directory; wait for it to end" in line
    assert not (out / "manifest.json").exists() and not (out / "summary.json").exists()
    assert not (out / "report.html").exists()


def test_a_rebuild_of_the_same_request_writes_the_same_manifest(tmp_path):
    """A run records its benchmark by the manifest's SHA-256; the manifest held the build's
    seconds, so a rebuild of the same request looked like another benchmark to every run."""
    for name in ("a", "b"):
        assert spatialgap("build", "--out", str(tmp_path / name), *SMALL, "--no-render").returncode == 0
    assert (tmp_path / "a" / "manifest.json").read_bytes() == (tmp_path / "b" / "manifest.json").read_bytes()
    assert "extract_s" in json.loads((tmp_path / "a" / "timing.json").read_text())


def test_an_interrupted_build_resumes_drawing_its_maps(tmp_path):
    """A build stopped while drawing maps (rc 130) left a complete benchmark and some maps; the
    same command said "exists and is not empty". It now keeps the maps drawn and draws the rest."""
    out = tmp_path / "b"
    assert spatialgap("build", "--out", str(out), *SMALL).returncode == 0
    pngs = sorted((out / "maps").glob("*.png"))
    assert len(pngs) >= 2
    lost = pngs[: len(pngs) // 2]
    for png in lost:  # what an interruption leaves: the maps not drawn yet are absent
        png.unlink()
        png.with_suffix(".json").unlink()
    cut = out / "maps" / f".{lost[0].name}.x1y2z3.tmp"  # what a KILL leaves of a map being written
    cut.write_bytes(b"\x89PNG")
    kept = {p: p.stat().st_ino for p in pngs[len(pngs) // 2 :]}
    proc = spatialgap("build", "--out", str(out), *SMALL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "resuming" in proc.stdout and f"{len(lost)} drawn now, {len(kept)} kept" in proc.stdout
    assert all(p.is_file() for p in pngs)
    assert all(p.stat().st_ino == ino for p, ino in kept.items())  # not drawn again
    assert not cut.exists()
    other = spatialgap("build", "--out", str(out), *SMALL[:-1], "--seed", "1", "--no-progress")
    assert other.returncode == 2 and "exists and is not empty" in one_line_error(other, "build")
