"""FRIEDA-style free-form map answers: our deterministic verdicts beside the original authors'.

``rules`` scores one record, ``compare`` explains a disagreement, ``files`` scores result files,
``stats`` computes what the FRIEDA paper reports (MAPE, Cohen's kappa, McNemar pairs, direct vs
contextual agreement), ``cli`` is ``spatialgap frieda-score``; ``judge`` (the optional judge model)
is loaded only when a judge is asked for. ``dataset`` reads a FRIEDA-format dataset and ``run`` is
``spatialgap frieda-run`` (registered on its own, so that frieda-score never loads the runner).
"""

from __future__ import annotations

from scoring.frieda.cli import add_parser, format_table, run
from scoring.frieda.compare import disagreement_cause
from scoring.frieda.files import model_of, score_files
from scoring.frieda.rules import (
    ANSWER_TYPES,
    TOLERANCE,
    Judge,
    clean_part,
    expected_directions,
    normalise_text,
    score_record,
)

__all__ = [
    "ANSWER_TYPES",
    "TOLERANCE",
    "Judge",
    "add_parser",
    "clean_part",
    "disagreement_cause",
    "expected_directions",
    "format_table",
    "model_of",
    "normalise_text",
    "run",
    "score_files",
    "score_record",
]
