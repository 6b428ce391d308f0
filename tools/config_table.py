"""Rewrite the README's table of `[models.NAME]` fields from the config's own definitions
(`scoring.runner.config_fields`), between its two marker comments.

    python tools/config_table.py          # make config-table
"""

from __future__ import annotations

from pathlib import Path

from scoring.runner.config_fields import with_table

README = Path(__file__).resolve().parents[1] / "README.md"

if __name__ == "__main__":
    try:
        README.write_text(with_table(README.read_text(encoding="utf-8")), encoding="utf-8")
    except ValueError as exc:
        raise SystemExit(f"{README}: {exc}") from None
