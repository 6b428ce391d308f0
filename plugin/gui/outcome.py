"""What a finished run tells the analyst: one message, its level chosen from the outcome, and the
details (the server's own words for each failed sample) behind a Details button."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from qgis.PyQt.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QPushButton, QVBoxLayout

from scoring.vocab import Verdict

from ..gui.instance_text import SUCCESS_VERDICTS
from ..utils.compat import MSG_CRITICAL, MSG_INFO, MSG_SUCCESS, MSG_WARNING
from ..utils.i18n import number, tr
from ..utils.text import plain

FIRST_FAILURE_CHARS = 200  # the bar shows the start of the first failure; Details has it all


@dataclass
class Outcome:
    level: object  # a Qgis message level
    text: str
    details: str = ""


def run_outcome(
    model: str,
    cancelled: bool,
    error: str | None,
    verdicts: dict[str, dict],
    failures,
    headline: str | None = None,
):
    """The one message for a finished run: errors are critical, nothing correct is a warning,
    everything correct is a success; `failures` are the journal's per-sample failure lines;
    `headline` (the server's own words) leads the bar when the endpoint refused the run."""
    failures = list(failures)
    n = len(verdicts)
    n_ok = sum(1 for v in verdicts.values() if v.get("verdict") in SUCCESS_VERDICTS)
    n_error = sum(1 for v in verdicts.values() if v.get("verdict") == Verdict.ERROR)
    score = tr("{ok} of {n} correct").format(ok=number(n_ok), n=number(n))
    details = "\n".join(([error] if error else []) + failures)
    if cancelled:
        text = tr("{model}: run cancelled ({score}); finished samples are kept and a new run resumes them.")
        return Outcome(MSG_WARNING, text.format(model=model, score=score), details)
    if error:
        text = tr("{model}: run failed: {error}").format(model=model, error=_first_line(headline or error))
        if "map image(s) missing" in error:  # what to do about it, not only what went wrong
            text += " " + tr(
                "Render the maps first: Processing ▸ Spatial Gap ▸ Render benchmark maps, "
                "map folder left empty."
            )
        return Outcome(MSG_CRITICAL, text, details)
    if n_error:
        first = _first_line(failures[0]) if failures else tr("request failed")
        text = tr("{model}: {score}; {k} request(s) failed: {first}").format(
            model=model, score=score, k=n_error, first=first
        )
        return Outcome(MSG_CRITICAL, text, details)
    if n == 0:
        return Outcome(MSG_WARNING, tr("{model}: no answer was recorded").format(model=model), details)
    level = MSG_SUCCESS if n_ok == n else MSG_WARNING if n_ok == 0 else MSG_INFO
    return Outcome(level, f"{model}: {score}", details)


def _first_line(text: str) -> str:
    """The start of a server's words as plain text (a proxy's HTML page reads as its text)."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return plain(line, FIRST_FAILURE_CHARS)


BAR_CHARS = 110  # what the message bar shows on one line beside its title and buttons


def push_outcome(bar, title: str, outcome: Outcome, duration: int) -> None:
    """One bar item; a Details button opens the full log (as Processing's messages do). The
    bar's text area shows about one line at the dock's usual width: a longer text is shortened
    there, whole in the tooltip and at the top of Details."""
    shown = textwrap.shorten(" ".join(outcome.text.split()), BAR_CHARS, placeholder=" …")
    item = bar.createMessage(title, shown)
    item.setToolTip(outcome.text)
    details = outcome.details
    if shown != " ".join(outcome.text.split()):
        details = outcome.text + ("\n\n" + details if details else "")
    if details:
        button = QPushButton(tr("Details"))
        button.clicked.connect(lambda: DetailsDialog(title, details, bar.window()).exec())
        item.layout().addWidget(button)
    bar.pushWidget(item, outcome.level, duration)


class DetailsDialog(QDialog):
    def __init__(self, title: str, details: str, parent=None):
        super().__init__(parent)
        self.setWindowTitle(title)
        layout = QVBoxLayout(self)
        self.text = QPlainTextEdit(details)
        self.text.setReadOnly(True)
        layout.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(640, 320)
