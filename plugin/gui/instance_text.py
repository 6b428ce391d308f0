"""The dock's text panels as HTML: an instance's question or instruction (its reference answer on
request), a verdict, and the constraint list of an edit."""

from __future__ import annotations

import html
import json
import string

from scoring.formats.records import Instance
from scoring.vocab import Form, Task, Verdict

from ..core.styles import FAIL_COLOR, PASS_COLOR
from ..utils.i18n import tr
from ..utils.sentences import found, requirement
from ..utils.text import plain, reason_text, verdict_name

CHOICE_LETTERS = string.ascii_uppercase
SUCCESS_VERDICTS = (Verdict.CORRECT, Verdict.CORRECT_REFUSAL)


def instance_html(inst: Instance, reveal: bool, form: str = Form.MCQ) -> str:
    """The instance as the chosen QA form asks it: its choices only in the MCQ form."""
    paragraphs = [
        f"<b>{html.escape(inst['id'])}</b> — {html.escape(inst.get('relation', ''))} "
        f"({html.escape(inst.get('family', ''))}, {html.escape(inst.get('task', ''))})"
    ]
    if inst.get("task") == Task.EDIT:
        paragraphs.append(html.escape(inst.get("instruction", "")).replace("\n", "<br>"))
    else:
        paragraphs += _question_paragraphs(inst, form)
    if reveal:  # whether it can be answered is part of the reference: a human baseline sees it only here
        paragraphs.append(_reference_html(inst))
        paragraphs += _answerability_paragraphs(inst)
    return "<p>" + "</p><p>".join(paragraphs) + "</p>"


def _question_paragraphs(inst: Instance, form: str) -> list[str]:
    out = [html.escape(inst.get("question", ""))]
    choices = inst.get("choices") or []
    if choices and form == Form.MCQ:  # every choice, lettered as the model reads them
        out.append(
            "<br>".join(
                f"<b>{CHOICE_LETTERS[i]}.</b> {html.escape(str(choice))}" for i, choice in enumerate(choices)
            )
        )
    return out


def _answerability_paragraphs(inst: Instance) -> list[str]:
    """Where the instance cannot be answered and, for a variant built unanswerable, why (its kind and
    the reason scoring.relations.unanswerable re-checks)."""
    out = []
    answerable = inst.get("answerable") or {}
    if answerable and not all(answerable.values()):
        blind = ", ".join(modality for modality, ok in answerable.items() if not ok)
        out.append("<i>" + tr("Not answerable in: {m}").format(m=blind) + "</i>")
    made = inst.get("unanswerable")
    if isinstance(made, dict):
        out.append(
            "<b>"
            + tr("Unanswerable by design")
            + f"</b> ({html.escape(str(made.get('kind')))}): {html.escape(str(made.get('reason')))}"
        )
    return out


def _reference_html(inst: Instance) -> str:
    if inst.get("task") == Task.EDIT:
        ref = json.dumps(inst.get("reference_edit"), ensure_ascii=False)
        return "<b>" + tr("Reference edit:") + "</b> <code>" + html.escape(ref) + "</code>"
    unit = inst.get("unit") or ""
    choice = inst.get("correct_choice")
    extra = f" ({tr('choice')} {choice})" if choice else ""
    return (
        "<b>"
        + tr("Reference answer:")
        + f"</b> {html.escape(str(inst.get('answer')))} {html.escape(unit)}"
        + html.escape(extra)
    )


def verdict_html(verdict: dict) -> str:
    """The verdict, its reason and the parsed answer, coloured by success."""
    color = PASS_COLOR if verdict.get("verdict") in SUCCESS_VERDICTS else FAIL_COLOR
    value = verdict.get("value")
    shown = (
        ""
        if value is None
        else f" — {tr('answer')}: {html.escape(json.dumps(value, ensure_ascii=False)[:300])}"
    )
    return (
        f"<b style='color:{color}'>{html.escape(verdict_name(verdict.get('verdict')))}</b>: "
        f"{html.escape(plain(reason_text(verdict.get('reason'))))}{shown}"
    )


def constraints_html(views, verdict: dict | None) -> str:
    """Per constraint: ✔ / ✘, what it requires and what was found (a sentence), under the verdict
    if any."""
    rows = [verdict_html(verdict)] if verdict is not None else []
    for view in views:
        mark = "✔" if view.passed else "✘"
        color = PASS_COLOR if view.passed else FAIL_COLOR
        error = f" <i>({html.escape(plain(view.error))})</i>" if view.error else ""
        rows.append(
            f"<span style='color:{color}'><b>{mark} #{view.index + 1}</b></span> "
            f"{html.escape(requirement(view))}<br>&nbsp;&nbsp;&nbsp;→ {tr('found')}: "
            f"<b>{html.escape(found(view))}</b>{error}"
        )
    return "<br>".join(rows)
