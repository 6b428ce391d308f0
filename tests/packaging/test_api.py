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
    record = json.loads(r.stdout)  # stdout is the one object, nothing else
    assert record["command"] == "selfcheck" and record["exit_code"] == 0 and record["error"] is None
    # the command's own result line goes to stderr under --json, nowhere under -q
    r = _cli("--json", "selfcheck")
    assert json.loads(r.stdout)["exit_code"] == 0 and "selfcheck" in r.stderr
    r = _cli("-q", "selfcheck")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    r = _cli("--json", "export", str(tmp_path / "absent"), "--out", str(tmp_path / "x"))
    record = json.loads(r.stdout.strip().splitlines()[-1])
    assert (
        r.returncode == 2 and record["exit_code"] == 2 and "benchmark directory not found" in record["error"]
    )


def test_every_option_of_every_command_has_help_and_shows_its_default():
    import argparse

    from scoring.cli import make_parser

    parser = make_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    undocumented = [
        f"{name} {a.option_strings[0] if a.option_strings else a.dest}"
        for name, p in sub.choices.items()
        for a in p._actions
        if not a.help and not isinstance(a, argparse._HelpAction)
    ]
    assert not undocumented, undocumented
    text = sub.choices["build"].format_help()
    assert "(default: 25)" in text and "(default: 0)" in text  # a zero default is still shown
    assert "20 %%" not in sub.choices["frieda-score"].format_help()
