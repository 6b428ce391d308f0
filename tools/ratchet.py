"""The lint ratchet: every per-file ignore in pyproject.toml must still be needed.

`[tool.ruff.lint.per-file-ignores]` lists today's offenders of the stricter rules file by file; an
entry may only shrink. This runs ruff once with those ignores lifted and fails when an entry names
a file that no longer exists or a code its file no longer breaks (remove it from the list).
Folder-wide entries (globs) are policy, not debt, and are left alone.

    python tools/ratchet.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def stale_entries(root: Path = ROOT) -> list[str]:
    """One line per per-file ignore that no longer matches a violation."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    ignores: dict[str, list[str]] = config["tool"]["ruff"]["lint"].get("per-file-ignores", {})
    entries = {f: codes for f, codes in ignores.items() if not any(c in f for c in "*?[")}
    ruff = Path(sys.executable).with_name("ruff")
    out = subprocess.run(
        [
            str(ruff),
            "check",
            "--output-format",
            "json",
            "--exit-zero",
            "--config",
            "lint.per-file-ignores = {}",
            *entries,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found: dict[str, set[str]] = defaultdict(set)
    for v in json.loads(out):
        found[Path(v["filename"]).resolve().relative_to(root).as_posix()].add(v["code"])
    stale = []
    for f, codes in sorted(entries.items()):
        if not (root / f).is_file():
            stale.append(f"{f}: no such file (remove its entry)")
            continue
        for code in codes:
            if not any(c.startswith(code) for c in found[f]):
                stale.append(f"{f}: no longer breaks {code} (remove it from the entry)")
    return stale


def main() -> int:
    stale = stale_entries()
    for line in stale:
        print(f"ratchet: {line}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
