"""Deterministic scoring of recorded responses: verdicts, summary tables, reports, selfcheck, gate.
Scoring never calls a model, so any run can be re-scored offline."""

from typing import Any

from scoring.score.verdicts import Scored, score_edit, score_prediction, score_qa
from scoring.vocab import VERDICTS

__all__ = [
    "VERDICTS",
    "Scored",
    "score_qa",
    "score_edit",
    "score_prediction",
    "score_runs",
    "write_report",
    "run_selfcheck",
]


def __getattr__(name: str) -> Any:
    # The heavier entry points (matplotlib, scipy) are imported on first use only, so that
    # `from scoring.score import score_qa` stays cheap inside the QGIS plugin.
    if name == "score_runs":
        from scoring.score.results import score_runs

        return score_runs
    if name == "write_report":
        from scoring.score.report import write_report

        return write_report
    if name == "run_selfcheck":
        from scoring.score.selfcheck import run_selfcheck

        return run_selfcheck
    raise AttributeError(name)
