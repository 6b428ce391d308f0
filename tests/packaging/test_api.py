"""The documented Python API: every name in scoring.__all__ resolves, is documented, and the
docstring examples run (doctest); the command line's --version, -q and --json."""

from __future__ import annotations

import doctest
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import scoring

REPO = Path(__file__).resolve().parents[2]
DOCTEST_MODULES = ["scoring", "scoring.vocab", "scoring.export"]


def test_every_public_name_resolves_and_has_a_docstring():
    for name in scoring.__all__:
        value = getattr(scoring, name)
        if name != "__version__":
            assert (getattr(value, "__doc__", None) or "").strip(), f"scoring.{name} has no docstring"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = scoring.nope


@pytest.mark.parametrize("module", DOCTEST_MODULES)
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    if module == "scoring":
        assert result.attempted >= 5


def test_the_api_page_names_every_public_name_and_its_examples_run():
    page = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [n for n in scoring.__all__ if n not in page]
    assert not missing, missing
    result = doctest.testfile(str(REPO / "docs" / "api.md"), module_relative=False)
    assert result.failed == 0 and result.attempted >= 10


def _cli(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("spatialgap")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120)


def test_version_prints_version_and_commit():
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    r = _cli("--version")
    assert r.returncode == 0 and r.stdout == f"spatialgap {scoring.__version__} (commit {head})\n"


def test_json_prints_one_record_and_quiet_keeps_stderr_empty(tmp_path):
    r = _cli("-q", "--json", "selfcheck")
    assert r.returncode == 0 and r.stderr == ""
    record = json.loads(r.stdout.strip().splitlines()[-1])
    assert record["command"] == "selfcheck" and record["exit_code"] == 0 and record["error"] is None
    r = _cli("--json", "export", str(tmp_path / "absent"), "--out", str(tmp_path / "x"))
    record = json.loads(r.stdout.strip().splitlines()[-1])
    assert (
        r.returncode == 2 and record["exit_code"] == 2 and "benchmark directory not found" in record["error"]
    )
