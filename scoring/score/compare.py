"""`spatialgap compare RESULTS...`: a leaderboard of models x headline cells across any number of
results directories (scoring.score.headline: the report's Table 1 cells under their names)."""

from __future__ import annotations

from pathlib import Path

from scoring.errors import OutputError
from scoring.score.headline import headline_cells, pct_text
from scoring.score.latex import latex_text
from scoring.score.report import _load
from scoring.score.tables_paper import csv_text
from scoring.support.files import write_atomic


def leaderboard(results_dirs: list, *, labels: dict[str, str] | None = None) -> dict:
    """{"names": cell names that any model has, "rows": [{"model", "cells": {name: cell}}]}, rows
    in Table 1's order (GeoJSON open QA, best first)."""
    _, rows = _load(list(results_dirs), labels)
    cells = headline_cells(rows)
    every = list(dict.fromkeys(n for c in cells.values() for n in c))  # Table 1's order
    names = [n for n in every if any(c.get(n, {}).get("rate") is not None for c in cells.values())]
    return {"names": names, "rows": [{"model": m, "cells": c} for m, c in cells.items()]}


def _cell(row: dict, name: str) -> dict:
    return row["cells"].get(name) or {
        "rate": None,
        "ci_low": None,
        "ci_high": None,
        "n": 0,
        "note": "not run",
    }


def leaderboard_text(board: dict) -> str:
    width = max([8, *(len(r["model"]) + 2 for r in board["rows"])])
    cols = [max(9, len(n)) + 2 for n in board["names"]]  # each as wide as its name
    lines = [f"{'model':<{width}}" + "".join(f"{n:>{w}}" for n, w in zip(board["names"], cols, strict=True))]
    for r in board["rows"]:
        texts = [pct_text(_cell(r, n)) for n in board["names"]]
        lines.append(
            f"{r['model']:<{width}}" + "".join(f"{t:>{w}}" for t, w in zip(texts, cols, strict=True))
        )
    return "\n".join(lines)


def board_records(board: dict) -> list[dict]:
    recs = []
    for r in board["rows"]:
        rec: dict = {"model": r["model"]}
        for n in board["names"]:
            c = _cell(r, n)
            rec[n] = c["rate"]
            rec[f"{n} ci_low"], rec[f"{n} ci_high"], rec[f"{n} n"] = c["ci_low"], c["ci_high"], c["n"]
        recs.append(rec)
    return recs


def write_leaderboard(board: dict, out: Path) -> list[Path]:
    """The leaderboard as CSV at `out` and booktabs LaTeX beside it (same stem, .tex)."""
    recs = board_records(board)
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{out.parent}: cannot create ({exc.strerror})") from None
    write_atomic(out, csv_text(recs))
    tex = out.with_suffix(".tex")
    write_atomic(tex, latex_text(recs, caption="Spatial Gap leaderboard"))
    return [out, tex]
