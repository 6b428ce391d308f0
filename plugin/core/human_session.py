"""The human baseline as the dock runs it: answers and hand edits recorded as the analyst's run,
an optional blind session (no verdict, no reference, one answer per instance until the session
ends), live constraint feedback while F0 moves (outside blind sessions), and the editable layer
removed once the edit is submitted."""

from __future__ import annotations

import json

from qgis.PyQt.QtCore import QTimer

from scoring.constraints.edits import EditError
from scoring.constraints.explain import explain_constraints
from scoring.errors import SpatialGapError
from scoring.formats.records import Instance
from scoring.score import score_edit, score_qa
from scoring.vocab import Task

from ..core.layer_util import remove_group
from ..gui.human_baseline import (
    EDIT_REFUSAL,
    QA_REFUSAL,
    HumanEdit,
    human_run_name,
    record_human_answer,
)
from ..gui.instance_text import constraints_html
from ..utils.compat import MSG_CRITICAL, MSG_INFO, MSG_WARNING
from ..utils.i18n import tr

LIVE_DELAY_MS = 150  # live feedback waits for the drag to pause


class HumanSession:
    def __init__(self, dock):
        self.dock = dock
        self.panel = dock.human_panel
        self.edit: HumanEdit | None = None
        self.blind = False
        self.answered: set[str] = set()  # instance ids answered in this blind session
        self.hidden: dict[str, dict] = {}  # their verdicts, shown when the session ends
        self._live = QTimer()
        self._live.setSingleShot(True)
        self._live.setInterval(LIVE_DELAY_MS)
        self._live.timeout.connect(self.live_feedback)
        self.panel.blind_btn.toggled.connect(self.set_blind)

    # ------------------------------------------------------------------ blind sessions
    def set_blind(self, on: bool) -> None:
        """Start a blind session, or end it and show every verdict it held back."""
        if on == self.blind:
            return
        self.blind = on
        if on:
            self.answered.clear()
            self.hidden.clear()
            self.dock.reveal_btn.setChecked(False)
            if self.dock.current is not None:
                self.dock.select_instance(self.dock.current["id"])  # its drawings without verdicts
        else:
            for instance_id, verdict in self.hidden.items():
                self.dock.results[instance_id] = verdict
                self.dock.verdicts[instance_id] = verdict.get("verdict", "")
            n = len(self.hidden)
            self.hidden.clear()
            self.dock.apply_filter()
            if self.dock.current is not None:
                self.dock.select_instance(self.dock.current["id"])
            self.dock.message(tr("Blind session ended: {n} answer(s) scored").format(n=n), MSG_INFO)
        self.panel.blind_btn.setChecked(on)
        self.panel.blind_btn.setText(tr("End blind session") if on else tr("Blind session"))
        self.dock._update_buttons()

    def _already_answered(self, inst: Instance) -> bool:
        if self.blind and inst["id"] in self.answered:
            self.dock.message(tr("One answer per instance in a blind session"), MSG_WARNING)
            return True
        return False

    def _publish(self, inst: Instance, verdict: dict, title: str | None = None) -> None:
        if self.blind:
            self.answered.add(inst["id"])
            self.hidden[inst["id"]] = verdict
            self.dock.verdict_view.setHtml(
                "<i>" + tr("Answer recorded. Verdicts are shown when the blind session ends.") + "</i>"
            )
        else:
            self.dock.show_verdict(inst, verdict, title=title)
        self.dock.apply_filter()

    # ------------------------------------------------------------------ answers
    def _record(self, inst: Instance, text: str, form: str) -> bool:
        dock = self.dock
        assert dock.bench is not None and dock.runs_root is not None
        if not self.panel.analyst.strip():  # a missing name is a step to take, not an error
            dock.message(tr("give the analyst's name first"), MSG_WARNING)
            self.panel.analyst_edit.setFocus()
            return False
        try:
            record_human_answer(dock.bench, dock.runs_root, self.panel.analyst, inst, text, form=form)
        except (SpatialGapError, OSError) as exc:
            dock.message(str(exc), MSG_CRITICAL)
            return False
        return True

    def submit_answer(self) -> dict | None:
        inst = self.dock.current
        if inst is None or inst.get("task") != Task.QA or self._already_answered(inst):
            return None
        text = f"Answer: {self.panel.answer_edit.text().strip()}"
        form = self.dock.model_panel.qa_form
        if not self._record(inst, text, form):
            return None
        verdict = score_qa(inst, text, form=form).as_dict()
        verdict["_run"] = human_run_name(self.panel.analyst)
        self.panel.answer_edit.clear()
        self._publish(inst, verdict)
        return verdict

    def submit_refusal(self) -> dict | None:
        """The analyst's "cannot be determined": recorded and scored like a model's refusal (right on
        an unanswerable question or an edit no edit can satisfy, a false refusal elsewhere)."""
        inst = self.dock.current
        if inst is None or self._already_answered(inst):
            return None
        edit = inst.get("task") == Task.EDIT
        form = "edit" if edit else self.dock.model_panel.qa_form
        text = EDIT_REFUSAL if edit else QA_REFUSAL
        if not self._record(inst, text, form):
            return None
        verdict = (score_edit(inst, text) if edit else score_qa(inst, text, form=form)).as_dict()
        verdict["_run"] = human_run_name(self.panel.analyst)
        if edit:
            self.discard_edit()
        self._publish(inst, verdict, title=verdict["_run"] if edit else None)
        self.dock._update_buttons()
        return verdict

    # ------------------------------------------------------------------ hand edits
    def start_edit(self):
        """An editable copy of the target for QGIS's own move / rotate / scale tools."""
        dock, inst = self.dock, self.dock.current
        if inst is None or inst.get("task") != Task.EDIT or dock.scene.group is None:
            return None
        if self._already_answered(inst):
            return None
        self.discard_edit()
        self.edit = HumanEdit.start(inst, dock.scene.sub_group(tr("human edit")))
        self.edit.layer.geometryChanged.connect(lambda *_args: self._live.start())
        if dock.iface is not None:
            dock.iface.setActiveLayer(self.edit.layer)
        dock._update_buttons()
        dock.message(
            tr("Move, rotate or scale the feature with QGIS's editing tools, then press Submit edit.")
        )
        return self.edit.layer

    def live_feedback(self) -> list | None:
        """The constraints as they stand for F0 where the analyst has put it (not in a blind
        session); returns the constraint views shown."""
        edit, inst = self.edit, self.dock.current
        if self.blind or edit is None or inst is None or edit.instance["id"] != inst["id"]:
            return None
        try:
            verdict = score_edit(inst, json.dumps(edit.to_edit())).as_dict()
        except (EditError, IndexError, ValueError) as exc:
            self.dock.verdict_view.setHtml(f"<i>{tr('Live check')}: {exc}</i>")
            return None
        views = explain_constraints(inst, verdict.get("edited_scene"), results=verdict.get("constraints"))
        title = tr("live check")
        self.dock.scene.draw_constraints(inst, views, None, title, zoom=False)
        self.dock.verdict_view.setHtml(f"<b>{title}</b><br>" + constraints_html(views, None))
        return views

    def submit_edit(self) -> dict | None:
        dock, inst, edit = self.dock, self.dock.current, self.edit
        if inst is None or edit is None or self._already_answered(inst):
            return None
        try:
            text = json.dumps(edit.to_edit())
        except (EditError, IndexError, ValueError) as exc:
            dock.message(str(exc), MSG_CRITICAL)
            return None
        if not self._record(inst, text, "edit"):
            return None
        verdict = score_edit(inst, text).as_dict()
        verdict["_run"] = human_run_name(self.panel.analyst)
        self.discard_edit()  # the edited F0 is drawn with the verdict; the editable copy goes
        self._publish(inst, verdict, title=verdict["_run"])
        dock._update_buttons()
        return verdict

    def may_leave(self) -> bool:
        """Whether the analyst's unsubmitted edit of F0 may be dropped (asked only if they moved,
        reshaped or re-attributed it)."""
        edit = self.edit
        try:
            changed = edit is not None and edit.layer.isModified()
        except RuntimeError:  # the layer is already gone
            changed = False
        if not changed:
            return True
        assert edit is not None
        return self.dock.ask(
            tr("Discard your edit of {id}?").format(id=edit.instance.get("target", "F0")),
            tr("Your edit of {id} in {instance} has not been submitted.").format(
                id=edit.instance.get("target", "F0"), instance=edit.instance["id"]
            ),
        )

    def discard_edit(self) -> None:
        """Remove the editable layer (its edits dropped) and its group."""
        edit, self.edit = self.edit, None
        self._live.stop()
        if edit is None:
            return
        try:
            layer = edit.layer
            if layer.isEditable():
                layer.rollBack()
            node = self.dock.scene.group.findGroup(tr("human edit")) if self.dock.scene.group else None
            if node is not None:
                remove_group(node)
        except RuntimeError:  # the layer or group is already gone (project cleared)
            pass
