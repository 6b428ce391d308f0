"""The lint ratchet (tools/ratchet.py) names per-file ignores that are no longer needed."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import ratchet  # noqa: E402


def test_a_stale_entry_is_named_and_a_needed_one_is_not(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.ruff.lint]\n"
        'select = ["E", "SIM"]\n'
        "[tool.ruff.lint.per-file-ignores]\n"
        '"pkg/**" = ["E"]\n'
        '"pkg/offender.py" = ["SIM108"]\n'
        '"pkg/clean.py" = ["SIM108"]\n'
        '"pkg/gone.py" = ["E501"]\n'
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "offender.py").write_text(
        "def f(a):\n    if a:\n        b = 1\n    else:\n        b = 2\n    return b\n"
    )
    (tmp_path / "pkg" / "clean.py").write_text("def f(a):\n    return 1 if a else 2\n")
    assert ratchet.stale_entries(tmp_path) == [
        "pkg/clean.py: no longer breaks SIM108 (remove it from the entry)",
        "pkg/gone.py: no such file (remove its entry)",
    ]


def test_the_project_has_no_stale_entry():
    assert ratchet.stale_entries() == []


def test_a_long_function_needs_a_reason_and_a_listed_one_must_stay_long(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(62))
    (tmp_path / "scoring").mkdir()
    (tmp_path / "scoring" / "mod.py").write_text(
        f"def unlisted():\n{body}\n\n# long: one table, read top to bottom\ndef explained():\n{body}\n\n"
        f"def listed():\n{body}\n\ndef short():\n    return 1\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        '[tool.spatialgap.ratchet]\nlong-functions = ["scoring/mod.py:listed", "scoring/mod.py:short"]\n'
    )
    assert ratchet.long_function_problems(tmp_path) == [
        "scoring/mod.py:unlisted: over 60 lines; split it or say why in a '# long:' comment",
        "scoring/mod.py:short: no longer over 60 lines (remove it from long-functions)",
    ]


def test_no_function_of_the_project_is_long_without_a_reason():
    assert ratchet.long_function_problems() == []
