"""The Spatial Gap dock: open a benchmark, browse and filter its instances, show one as layers,
send it to a model, draw and score the result, record a human answer, export maps.

The panels live in their own modules (filters, model_panel, human_baseline, exports, scene_view,
instance_text); this one wires them to the dock's state."""

from __future__ import annotations

import json
from pathlib import Path

from qgis.core import QgsApplication, QgsMessageLog, QgsTask
from qgis.PyQt.QtCore import Qt, QUrl
from qgis.PyQt.QtGui import QDesktopServices
from qgis.PyQt.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from scoring.constraints.explain import explain_constraints
from scoring.errors import SpatialGapError
from scoring.formats.benchmark import Benchmark
from scoring.formats.records import Instance
from scoring.score import score_edit
from scoring.vocab import Task

from ..core import keys
from ..core.auth import read_key
from ..core.constraint_layers import label_text
from ..core.exports import CANVAS_SIDE_PX, BenchmarkMaps, ExportPanel, ScoreTask, export_canvas
from ..core.human_session import HumanSession
from ..core.memory import DockMemory
from ..core.restore import RestoreTask
from ..core.scene_view import SceneView
from ..core.tasks import LOG_TAG, RunTask, start_runs
from ..gui.browser import InstanceTable
from ..gui.confirm import SendConfirmation, estimate_text
from ..gui.filters import FilterPanel
from ..gui.help import help_button, readme_url, relation_url
from ..gui.human_baseline import HumanBaselinePanel, HumanEdit
from ..gui.instance_text import constraints_html, instance_html, verdict_html
from ..gui.model_panel import ModelPanel
from ..gui.outcome import Outcome, push_outcome, run_outcome
from ..gui.run_choice import coverage_text
from ..gui.settings_dialog import EndpointsDialog
from ..utils.compat import MSG_CRITICAL, MSG_INFO, MSG_SUCCESS, MSG_WARNING
from ..utils.i18n import tr
from ..utils.text import plain

BAR_TEXT_CHARS = 400  # the message bar: the log keeps the whole text


class SpatialGapDock(QDockWidget):
    def __init__(self, iface, plugin=None, parent=None):
        super().__init__(tr("Spatial Gap"), parent)
        self.setObjectName("SpatialGapDock")
        self.iface = iface
        self.plugin = plugin
        self.bench: Benchmark | None = None
        self.instances: list[Instance] = []
        self.current: Instance | None = None
        self.verdicts: dict[str, str] = {}  # instance id -> verdict of the last run
        self.results: dict[str, dict] = {}  # instance id -> last verdict dict
        self.tasks: list[QgsTask] = []
        self.run_tasks: list[RunTask] = []  # the model runs under way (Send is disabled meanwhile)
        self._open_report = True  # score_runs(open_report=False): the path in a message only
        self.last_outcome: Outcome | None = None
        self.scene = SceneView(iface)
        self.maps: BenchmarkMaps | None = None
        self._build_ui()
        self.reload_endpoints()
        # After the widgets are filled: filling them is not a choice to remember.
        self.memory = DockMemory(self)

    # ------------------------------------------------------------------ UI
    def _build_ui(self) -> None:
        body = QWidget()
        column = QVBoxLayout(body)
        path_row = QHBoxLayout()
        self.path_edit = QLineEdit()
        self.path_edit.setPlaceholderText(tr("benchmark directory"))
        self.path_edit.returnPressed.connect(lambda: self.open_benchmark(self.path_edit.text()))
        open_btn = QPushButton(tr("Open…"))
        open_btn.clicked.connect(self._choose_benchmark)
        path_row.addWidget(self.path_edit)
        path_row.addWidget(open_btn)
        column.addLayout(path_row)

        self.filters = FilterPanel()
        self.filters.changed.connect(self.apply_filter)
        column.addWidget(self.filters)

        split = self.splitter = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        top_column = QVBoxLayout(top)
        top_column.setContentsMargins(0, 0, 0, 0)
        self.count_label = QLabel(tr("No benchmark open"))
        self.list = InstanceTable()
        self.list.itemSelectionChanged.connect(self._on_selected)
        top_column.addWidget(self.count_label)
        top_column.addWidget(self.list)
        split.addWidget(top)
        self.text = QTextBrowser()
        self.text.setOpenExternalLinks(False)
        split.addWidget(self.text)
        self.verdict_view = QTextBrowser()
        split.addWidget(self.verdict_view)
        split.setSizes([200, 150, 170])  # a few table rows, the instruction and the verdict
        column.addWidget(split, 1)

        self.reveal_btn = QPushButton(tr("Reveal reference answer"))
        self.reveal_btn.setCheckable(True)
        self.reveal_btn.toggled.connect(self._reveal)
        reveal_row = QHBoxLayout()
        reveal_row.addWidget(self.reveal_btn, 1)
        # Help: the shown instance's relation in the reference, and the plugin's guide.
        self.relation_help_btn = help_button(
            tr("Relation reference"),
            lambda: relation_url(self.current.get("relation") if self.current else None),
        )
        reveal_row.addWidget(self.relation_help_btn)
        reveal_row.addWidget(help_button(tr("Help"), readme_url))
        column.addLayout(reveal_row)

        self.model_panel = ModelPanel()
        self.model_panel.send_btn.clicked.connect(lambda: self.send(current_only=True))
        self.model_panel.send_all_btn.clicked.connect(lambda: self.send(current_only=False))
        self.model_panel.settings_btn.clicked.connect(self._open_settings)
        self.model_panel.cancel_btn.clicked.connect(self.cancel_runs)
        self.model_panel.endpoint_combo.currentTextChanged.connect(self._endpoint_changed)
        self.model_panel.form_combo.currentIndexChanged.connect(lambda _i: self._show_text())
        self.human_panel = HumanBaselinePanel()
        self.human = HumanSession(self)
        self.human_panel.submit_answer_btn.clicked.connect(self.submit_human_answer)
        self.human_panel.start_edit_btn.clicked.connect(self.start_human_edit)
        self.human_panel.submit_edit_btn.clicked.connect(self.submit_human_edit)
        self.human_panel.refuse_btn.clicked.connect(self.submit_human_refusal)
        # Model and human baseline share one tab widget: the text panels above need the height.
        self.tabs = QTabWidget()
        self.tabs.addTab(self.model_panel, tr("Model"))
        self.tabs.addTab(self.human_panel, tr("Human baseline"))
        column.addWidget(self.tabs)

        self.export_panel = ExportPanel(self)
        column.addWidget(self.export_panel)
        self.setWidget(body)
        self._update_buttons()

    def _update_buttons(self) -> None:
        task = self.current.get("task") if self.current is not None else None
        idle = not self.run_tasks
        # The shown instance is sent only while the filters keep it (what the list shows).
        listed = self.current is not None and self.current["id"] in self.list.ids()
        self.model_panel.send_btn.setEnabled(task is not None and idle and listed)
        self.model_panel.send_all_btn.setEnabled(bool(self.instances) and idle)
        self.human_panel.submit_answer_btn.setEnabled(task == Task.QA)
        self.human_panel.start_edit_btn.setEnabled(task == Task.EDIT)
        self.human_panel.submit_edit_btn.setEnabled(self.human_edit is not None)
        self.human_panel.refuse_btn.setEnabled(task is not None)
        # A blind session shows no reference until it ends.
        self.reveal_btn.setEnabled(task is not None and not self.human.blind)
        # Nothing enabled that cannot work yet.
        self.export_panel.update_buttons(self.current is not None, self.bench is not None)
        has_endpoint = self.model_panel.endpoint() is not None
        for button in (self.model_panel.send_btn, self.model_panel.send_all_btn):
            button.setEnabled(button.isEnabled() and has_endpoint)
            button.setToolTip("" if has_endpoint else tr("Configure a model endpoint first (Endpoints…)"))

    def message(self, text: str, level=MSG_INFO, duration: int = 6) -> None:
        bar = self.iface.messageBar() if self.iface is not None else None
        if bar is not None:
            # The message bar shows one line: a second line would be cut off, so lines are joined.
            one_line = " — ".join(line.strip() for line in text.splitlines() if line.strip())
            bar.pushMessage(tr("Spatial Gap"), plain(one_line, BAR_TEXT_CHARS), level, duration)
        QgsMessageLog.logMessage(text, LOG_TAG, level)

    def ask(self, question: str, detail: str) -> bool:
        """Yes / no, No by default (nothing is lost by answering No)."""
        box = QMessageBox(QMessageBox.Icon.Question, tr("Spatial Gap"), question, parent=self)
        box.setInformativeText(detail)
        box.setStandardButtons(QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        return box.exec() == QMessageBox.StandardButton.Discard

    def reload_endpoints(self) -> None:
        self.model_panel.reload_endpoints()
        self._update_buttons()

    def _open_settings(self) -> None:
        EndpointsDialog(self).exec()
        self.reload_endpoints()

    # ------------------------------------------------------------------ benchmark and filters
    def _choose_benchmark(self) -> None:
        path = QFileDialog.getExistingDirectory(self, tr("Open a benchmark directory"), self.path_edit.text())
        if path:
            self.open_benchmark(path)

    def open_benchmark(self, path) -> bool:
        try:
            bench = Benchmark.open(path, require_instances=True)
        except SpatialGapError as exc:
            self.message(str(exc), MSG_CRITICAL)
            return False
        self.bench, self.instances = bench, bench.all_instances()
        self.path_edit.setText(str(path))
        if hasattr(self, "memory"):
            self.memory.benchmark_opened(path)
        self.scene.set_context(bench.context_path)
        self.maps = BenchmarkMaps(bench.context_path)
        self.verdicts.clear()
        self.results.clear()
        self.filters.fill(self.instances)
        self.apply_filter()
        self.restore_verdicts()
        return True

    def restore_verdicts(self) -> RestoreTask | None:
        """The endpoint's last verdicts from the runs on disk, read in a task."""
        endpoint = self.model_panel.endpoint()
        if self.bench is None or self.runs_root is None or endpoint is None:
            return None
        try:
            spec = endpoint.spec()
        except SpatialGapError:
            return None
        task = RestoreTask(self.bench, self.runs_root, spec, self.model_panel.modality, self._restored)
        self.tasks.append(task)
        QgsApplication.taskManager().addTask(task)
        return task

    def _restored(self, task: RestoreTask) -> None:
        if task in self.tasks:
            self.tasks.remove(task)
        if task.bench is not self.bench or not task.results:
            return
        fresh = {i: v for i, v in task.results.items() if i not in self.results}  # never over a newer
        for instance_id, verdict in fresh.items():
            self.results[instance_id] = verdict
            self.verdicts[instance_id] = verdict.get("verdict", "")
        if self.current is not None and self.current["id"] in fresh:
            self.show_verdict(self.current, fresh[self.current["id"]])
        self.apply_filter()

    @property
    def runs_root(self) -> Path | None:
        return self.bench.path / "runs" if self.bench is not None else None

    def filtered(self) -> list[Instance]:
        selection = self.filters.selection()
        return [inst for inst in self.instances if selection.keeps(inst, self.verdicts)]

    def apply_filter(self) -> None:
        keep = self.current["id"] if self.current else None
        self.filters.cascade()
        shown = self.filtered()
        runs = {i: v.get("_run", "") for i, v in self.results.items()}
        self.list.fill(shown, self.verdicts, runs, keep)
        self.count_label.setText(
            tr("{n} of {total} instances").format(n=len(shown), total=len(self.instances))
        )
        self._update_buttons()

    def _on_selected(self) -> None:
        instance_id = self.list.current_id()
        if instance_id is not None and (self.current is None or self.current["id"] != instance_id):
            self.select_instance(instance_id)

    # ------------------------------------------------------------------ one instance
    def select_instance(self, instance_id: str) -> None:
        inst = self.bench.get(instance_id) if self.bench is not None else None
        if inst is None:
            return
        if self.current is not None and inst["id"] != self.current["id"] and not self.human.may_leave():
            self.list.select_id(self.current["id"])  # back to the instance being edited
            return
        self.current = inst
        self.human.discard_edit()
        self.reveal_btn.blockSignals(True)  # a new instance starts hidden, nothing to redraw
        self.reveal_btn.setChecked(False)
        self.reveal_btn.blockSignals(False)
        self._show_text()
        self.scene.show(inst)
        verdict = self.results.get(instance_id)
        if verdict is not None:
            self.show_verdict(inst, verdict)
        elif inst.get("task") == Task.EDIT and not self.human.blind:
            # Before any run: the constraints as they stand on the initial scene (not in a blind
            # session: their ✔ / ✘ would give the answer away).
            self.show_constraints(inst, None, tr("initial scene"))
        else:
            self.verdict_view.clear()
        self._update_buttons()

    def _show_text(self) -> None:
        if self.current is None:
            self.text.clear()
        else:
            html = instance_html(self.current, self.reveal_btn.isChecked(), self.model_panel.qa_form)
            self.text.setHtml(html)

    def _reveal(self, checked: bool) -> None:
        """The reference answer in the text; for an edit, the reference edit drawn as well (and
        the drawing put back as it was when hidden)."""
        self._show_text()
        inst = self.current
        if inst is None or inst.get("task") != Task.EDIT:
            return
        if checked and inst.get("reference_edit") is not None:
            reference = score_edit(inst, json.dumps(inst["reference_edit"])).as_dict()
            self.show_constraints(inst, reference.get("edited_scene"), tr("reference edit"), reference)
        elif not checked:
            verdict = self.results.get(inst["id"])
            if verdict is not None:
                self.show_verdict(inst, verdict)
            else:
                self.show_constraints(inst, None, tr("initial scene"))

    def show_constraints(
        self, inst: Instance, edited_scene: dict | None, title: str, verdict: dict | None = None
    ):
        """Draw the edit (if any) beside the ghost of F0 with one set of constraint layers; list
        the same constraints in the verdict panel."""
        results = (verdict or {}).get("constraints") if edited_scene is not None else None
        views = explain_constraints(inst, edited_scene, results=results)
        self.scene.draw_constraints(inst, views, edited_scene, title)
        self.verdict_view.setHtml(constraints_html(views, verdict))
        return views

    def show_verdict(
        self, inst: Instance, verdict: dict, draw: bool = True, title: str | None = None
    ) -> None:
        self.results[inst["id"]] = verdict
        self.verdicts[inst["id"]] = verdict.get("verdict", "")
        if inst.get("task") == Task.EDIT and draw:
            run = title or verdict.get("_run", tr("model"))
            if verdict.get("edited_scene") is None:  # no edit (a failed request): say what is drawn
                run = tr("initial scene")
            self.show_constraints(inst, verdict.get("edited_scene"), run, verdict)
        else:
            self.verdict_view.setHtml(verdict_html(verdict))

    # ------------------------------------------------------------------ model runs
    def send(self, current_only: bool = True, endpoint_name: str | None = None) -> list[RunTask]:
        """Start RunTasks for the current instance or the filtered set; returns them."""
        if self.bench is None or self.runs_root is None:
            return []
        endpoint = self.model_panel.endpoint(endpoint_name)
        if endpoint is None:
            self.message(tr("Configure a model endpoint first (Endpoints…)"), MSG_WARNING)
            return []
        chosen = ([self.current] if self.current else []) if current_only else self.filtered()
        if current_only and chosen and chosen[0] not in self.filtered():
            chosen = []  # the shown instance was filtered out: the list and the send agree
        if not chosen or self.run_tasks:
            return []
        try:
            if len(chosen) > 1 and not self.confirm_send(chosen, endpoint):
                return []
            spec = endpoint.spec()
            key = read_key(endpoint.authcfg)  # on the main thread: the auth manager may prompt
        except SpatialGapError as exc:
            self.message(str(exc), MSG_CRITICAL)
            return []
        panel = self.model_panel
        tasks = start_runs(
            self.bench, self.runs_root, spec, key, panel.modality, panel.qa_form, chosen, self._run_done
        )
        for task in tasks:
            self.tasks.append(task)
            self.run_tasks.append(task)
            task.progressChanged.connect(self._show_progress)
            QgsApplication.taskManager().addTask(task)
        self.model_panel.set_running(True)
        self._update_buttons()
        return tasks

    def confirm_send(self, chosen: list[Instance], endpoint) -> bool:
        """More than one instance is sent only once the analyst has seen the count and the cost."""
        panel = self.model_panel
        estimate = estimate_text(chosen, endpoint, panel.modality, panel.qa_form)
        return SendConfirmation(len(chosen), estimate, endpoint.name, self).confirmed()

    def _show_progress(self, _value=None) -> None:
        running = [t for t in self.run_tasks if t in self.tasks]
        if running:
            self.model_panel.set_running(True, sum(t.progress() for t in running) / len(running))

    def cancel_runs(self) -> None:
        for task in list(self.run_tasks):
            task.cancel()
        self.model_panel.cancel_btn.setEnabled(False)

    def _run_done(self, task: RunTask, ok: bool) -> None:
        for tasks in (self.tasks, self.run_tasks):
            if task in tasks:
                tasks.remove(task)
        if not self.run_tasks:
            self.model_panel.set_running(False)
        scored = self.score_task_results(task)
        error = None if ok or task.cancelled_by_user else task.error or tr("unknown error")
        outcome = run_outcome(
            task.spec.name, task.cancelled_by_user, error, scored, task.failures(), task.stop_message
        )
        self.last_outcome = outcome
        self.report(outcome)
        self._update_buttons()

    def report(self, outcome: Outcome) -> None:
        """One message bar item per outcome (errors stay until closed), and the log."""
        bar = self.iface.messageBar() if self.iface is not None else None
        if bar is not None:
            push_outcome(bar, tr("Spatial Gap"), outcome, 0 if outcome.level == MSG_CRITICAL else 10)
        details = f"\n{outcome.details}" if outcome.details else ""
        QgsMessageLog.logMessage(outcome.text + details, LOG_TAG, outcome.level)

    def _endpoint_changed(self, name: str) -> None:
        """Verdicts of another endpoint are not this one's: they leave the list and the panel."""
        stale = [i for i, v in self.results.items() if v.get("_endpoint", name) != name]
        for instance_id in stale:
            self.results.pop(instance_id, None)
            self.verdicts.pop(instance_id, None)
        if stale:
            if self.current is not None and self.current["id"] in stale:
                self.select_instance(self.current["id"])
            self.apply_filter()
        self.restore_verdicts()  # this endpoint's own verdicts, from its runs on disk

    def score_task_results(self, task: RunTask) -> dict[str, dict]:
        if self.bench is None:
            return {}
        scored = task.verdicts(self.bench)
        for instance_id, verdict in scored.items():
            verdict["_endpoint"] = task.spec.name
            self.results[instance_id] = verdict
            self.verdicts[instance_id] = verdict.get("verdict", "")
        if self.current is not None and self.current["id"] in scored:
            self.show_verdict(self.current, scored[self.current["id"]], title=task.spec.name)
        self.apply_filter()
        return scored

    # ------------------------------------------------------------------ human baseline
    @property
    def human_edit(self) -> HumanEdit | None:
        return self.human.edit

    def submit_human_answer(self) -> dict | None:
        return self.human.submit_answer()

    def start_human_edit(self):
        return self.human.start_edit()

    def submit_human_edit(self) -> dict | None:
        return self.human.submit_edit()

    def submit_human_refusal(self) -> dict | None:
        return self.human.submit_refusal()

    # ------------------------------------------------------------------ exports and scoring
    def export_benchmark_map(self, out_dir) -> Path | None:
        """The instance's map through scoring.render (the same bytes as a headless render)."""
        if self.current is None or self.maps is None:
            return None
        return self.maps.render(self.current, out_dir)

    def export_canvas(self, path, size: int = CANVAS_SIDE_PX) -> Path:
        """The canvas through a layout: the legend lists the shown instance's own layers."""
        title = self.current["id"] if self.current else ""
        shown = [node.layer() for node in self.scene.group.findLayers()] if self.scene.group else None
        # The keys are explained by the key panel, not the legend.
        legend = (
            [
                lyr
                for lyr in shown
                if lyr.fields().indexOf("pool") < 0
                and lyr.fields().indexOf("slot") < 0
                and not lyr.customProperty("spatialgap/furniture")
            ]
            if shown
            else None
        )
        lines = keys.key_lines(self.scene.views, label_text, self.current) if self.current else []
        # The scene's features and the edited target: what legend and key panel must not cover.
        task = [
            lyr
            for lyr in shown or []
            if lyr.fields().indexOf("attributes") >= 0 or lyr.fields().indexOf("state") >= 0
        ]
        return export_canvas(self.iface.mapCanvas(), path, size, title, legend, lines, task)

    def score_runs(
        self, runs, out_dir=None, open_report: bool = True, count_unsent: bool = False, coverage=()
    ) -> ScoreTask:
        """Score the runs in a background task, then open the HTML report. Each run is scored on
        the samples it answered (its coverage reported) unless `count_unsent`."""
        assert self.bench is not None
        out = Path(out_dir) if out_dir else self.bench.path / "results"
        self._open_report = open_report
        task = ScoreTask(self.bench.path, runs, out, self._score_done, only_recorded=not count_unsent)
        if coverage:
            self.message(tr("Scoring: {runs}").format(runs="; ".join(coverage_text(coverage).splitlines())))
        self.tasks.append(task)
        QgsApplication.taskManager().addTask(task)
        return task

    def _score_done(self, task: ScoreTask, ok: bool) -> None:
        if task in self.tasks:
            self.tasks.remove(task)
        if ok and task.report:
            # The path always, in the message bar and the log: a browser may not open (none
            # configured, or a headless session), and the report is a file worth finding again.
            opened = self._open_report and QDesktopServices.openUrl(QUrl.fromLocalFile(str(task.report)))
            text = (
                tr("Report written to {path}")
                if opened
                else tr("Report written to {path} (open it in a browser)")
            )
            self.message(text.format(path=task.report), MSG_SUCCESS, 20)
        elif not ok:
            self.message(tr("Scoring failed: {error}").format(error=task.error), MSG_CRITICAL, 0)

    def cancel_tasks(self) -> None:
        for task in list(self.tasks):
            try:
                task.cancel()
            except RuntimeError:  # the C++ task is already gone
                pass
