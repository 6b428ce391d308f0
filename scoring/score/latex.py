"""Tables as LaTeX (booktabs) beside their CSV: the same flat records, one row per record, so a
cell's figures in the .tex, the .csv and the report are one computation. Needs only
`\\usepackage{booktabs}` in the paper's preamble."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\&%$#_{}~^])")
_REPLACE = {"\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def escape(value: object) -> str:
    """A cell's text with LaTeX's special characters escaped (None: empty)."""
    if value is None:
        return ""
    text = str(value)
    return _SPECIAL.sub(lambda m: _REPLACE.get(m.group(1), "\\" + m.group(1)), text)


def latex_text(records: list[dict], *, caption: str) -> str:
    """A booktabs `table` of the records (columns: every field in first-seen order)."""
    fields: list[str] = []
    for r in records:
        fields.extend(k for k in r if k not in fields)
    fields = fields or ["empty"]
    spec = "".join("r" if _numeric(records, f) else "l" for f in fields)
    lines = [
        "\\begin{table}[htbp]",
        "\\centering\\small",
        f"\\caption{{{escape(caption)}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(escape(f) for f in fields) + " \\\\",
        "\\midrule",
    ]
    lines += [" & ".join(escape(r.get(f)) for f in fields) + " \\\\" for r in records]
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(lines)


def _numeric(records: list[dict], field: str) -> bool:
    values = [r.get(field) for r in records if r.get(field) is not None]
    return bool(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
