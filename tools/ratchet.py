"""The lint ratchet: every per-file ignore in pyproject.toml must still be needed, and no function
in scoring/ runs over 60 lines without saying why.

`[tool.ruff.lint.per-file-ignores]` lists today's offenders of the stricter rules file by file; an
entry may only shrink. This runs ruff once with those ignores lifted and fails when an entry names
a file that no longer exists or a code its file no longer breaks (remove it from the list).
Folder-wide entries (globs) are policy, not debt, and are left alone.

A function of scoring/ longer than 60 lines needs a comment `# long: <why>` on the line above its
`def` (or its first decorator); today's offenders are listed in `[tool.spatialgap.ratchet]
long-functions` as `path:name`, a list that may only shrink too.

    python tools/ratchet.py
"""

from __future__ import annotations

import ast
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


MAX_LINES = 60


def long_functions(root: Path = ROOT) -> list[str]:
    """`path:name` of every function in scoring/ over MAX_LINES lines with no `# long:` comment."""
    out = []
    for path in sorted((root / "scoring").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if (node.end_lineno or node.lineno) - node.lineno + 1 <= MAX_LINES:
                continue
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            above = lines[first - 2].strip() if first >= 2 else ""
            if not above.startswith("# long:"):
                out.append(f"{path.relative_to(root).as_posix()}:{node.name}")
    return out


def long_function_problems(root: Path = ROOT) -> list[str]:
    """New long functions without a reason, and listed ones that are no longer long."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config.get("tool", {}).get("spatialgap", {}).get("ratchet", {}).get("long-functions", []))
    found = set(long_functions(root))
    problems = [
        f"{f}: over {MAX_LINES} lines; split it or say why in a '# long:' comment"
        for f in sorted(found - listed)
    ]
    problems += [
        f"{f}: no longer over {MAX_LINES} lines (remove it from long-functions)"
        for f in sorted(listed - found)
    ]
    return problems


def main() -> int:
    stale = stale_entries() + long_function_problems()
    for line in stale:
        print(f"ratchet: {line}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
