"""Repeated sampling (a model's `samples = N`): how far a model's N answers to one item agree, and
how much its accuracy varies from one round of samples to the next, per model x input type x form.

One report table (registered below): its data (`sample_agreement`), its CSV (`write_csv`, written
only when some item was sampled twice) and its HTML (resources/report/tables/sample_agreement.html.j2).

- accuracy: the mean over items of each item's share of right samples, which with N verdicts per
  item (a sample without a reply is an "error" verdict) is the share of right verdicts, the
  headline accuracy of the summary cells.
- unanimous: the share of items whose N samples are all right or all wrong.
- pairwise agreement: over items, the share of the N(N-1)/2 pairs of samples with the same
  outcome (Fleiss' observed agreement P-bar). Chosen over Fleiss' kappa: the samples are
  exchangeable draws of one model, not raters with their own biases, and what a reader asks is how
  often two draws agree; kappa divides by 1 - P_e, which vanishes as accuracy nears 0 or 1 (a model
  always right, or always wrong, has no defined kappa however consistent it is).
- sample variance of accuracy: the accuracy of each round k (sample index k over all items),
  their variance (ddof 1) and range.

Outcomes are binary (right: correct or correct_refusal, as the accuracy counts them), so a
"wrong" and an "unparsed" reply to one item agree: both score 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from statistics import mean, variance

from scoring.formats.journal import sample_index_of
from scoring.score.report_tables import ReportInputs, report_table
from scoring.score.tables import SUCCESS
from scoring.score.tables_paper import csv_text
from scoring.support.files import write_atomic

CSV_NAME = "sample_agreement.csv"
FIELDS = (
    "model",
    "modality",
    "form",
    "samples",
    "items",
    "accuracy",
    "unanimous",
    "pairwise_agreement",
    "accuracy_variance",
    "accuracy_min",
    "accuracy_max",
)


def repeated(rows: Iterable[dict]) -> bool:
    """Whether any verdict is of a repeat (sample index > 0)."""
    return any(sample_index_of(r) for r in rows)


def first_samples(rows: Iterable[dict]) -> list[dict]:
    """The verdicts of each item's first sample: what the paired tests pair (each pair once; the
    repeats of one item are not independent pairs)."""
    return [r for r in rows if not sample_index_of(r)]


def _pairwise(outcomes: list[bool]) -> float:
    n, k = len(outcomes), sum(outcomes)
    return (k * (k - 1) + (n - k) * (n - k - 1)) / (n * (n - 1))


def sample_agreement(rows: Iterable[dict]) -> list[dict]:
    """One record per model x input type x form whose items were sampled more than once."""
    items: dict[tuple, dict[tuple, dict[int, bool]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        cell = (str(r["model"]), str(r["modality"]), str(r["form"]))
        items[cell][(r.get("city") or "", r["id"])][sample_index_of(r)] = r["verdict"] in SUCCESS
    out = []
    for cell in sorted(items):
        by_item = [s for s in items[cell].values() if len(s) > 1]
        if not by_item:
            continue
        n = max(len(s) for s in by_item)
        rounds = [mean(s[k] for s in by_item if k in s) for k in range(n)]
        out.append(
            {
                "model": cell[0],
                "modality": cell[1],
                "form": cell[2],
                "samples": n,
                "items": len(by_item),
                "accuracy": round(mean(mean(s.values()) for s in by_item), 6),
                "unanimous": round(mean(len(set(s.values())) == 1 for s in by_item), 6),
                "pairwise_agreement": round(mean(_pairwise(list(s.values())) for s in by_item), 6),
                "accuracy_variance": round(variance(rounds), 8),
                "accuracy_min": round(min(rounds), 6),
                "accuracy_max": round(max(rounds), 6),
            }
        )
    return out


@report_table(name="sample_agreement", csv=None, html="sample_agreement.html.j2")
def _report_table(inputs: ReportInputs) -> list[dict]:
    return sample_agreement(inputs.rows)


def write_csv(table: list[dict], out_dir: Path) -> Path:
    """`sample_agreement.csv` in `out_dir` (atomic)."""
    path = Path(out_dir) / CSV_NAME
    write_atomic(path, csv_text([{f: rec[f] for f in FIELDS} for rec in table]))
    return path
