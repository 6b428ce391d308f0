"""The headline cells: one name per number. Every figure `evaluate` prints and `compare` lists is
a Table 1 cell under the name the report gives it: `<input type> open`, `<input type> mcq`,
`<input type> edit strict CSR` and, for edits on a map image, `<input type> edit raster-tolerant`
(the report's headline for that column; strict CSR is printed beside it, never in its place)."""

from __future__ import annotations

from scoring.score.tables import PIXEL_EDIT_MODALITIES
from scoring.score.tables_paper import table1
from scoring.vocab import Form

STRICT = "strict CSR"
RASTER = "raster-tolerant"


def cell_name(modality: str, form: str, *, raster: bool = False) -> str:
    if form != Form.EDIT:
        return f"{modality} {form}"
    return f"{modality} edit {RASTER if raster else STRICT}"


def headline_cells(rows: list[dict]) -> dict[str, dict[str, dict]]:
    """model -> cell name -> Table 1 cell (rate, ci_low, ci_high, n, ...), in Table 1's order."""
    t1 = table1(rows)
    out: dict[str, dict[str, dict]] = {}
    for row in t1["rows"]:
        cells: dict[str, dict] = {}
        for (modality, form), c in zip(t1["columns"], row["cells"], strict=True):
            if form == Form.EDIT and modality in PIXEL_EDIT_MODALITIES:
                # both names for every model (a missing cell is missing under both)
                cells[cell_name(modality, form, raster=True)] = c
                cells[cell_name(modality, form)] = c.get("strict", c)
            else:
                cells[cell_name(modality, form)] = c
        out[row["model"]] = cells
    return out


def pct_text(cell: dict) -> str:
    """A cell as the report prints it: the rate in % with one decimal, or why it is empty."""
    return str(cell.get("note") or "no data") if cell.get("rate") is None else f"{100 * cell['rate']:.1f} %"
