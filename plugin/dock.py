"""The Spatial Gap dock: open a benchmark, browse and filter instances, show one as layers, send
it to a model, draw and score the result, record a human answer, export maps."""

from __future__ import annotations

import html
import json
import os
import traceback
from pathlib import Path

from qgis.core import (
    QgsApplication,
    QgsMapRendererSequentialJob,
    QgsMessageLog,
    QgsProject,
    QgsRectangle,
    QgsTask,
)
from qgis.PyQt.QtCore import QSize, Qt, QUrl
from qgis.PyQt.QtGui import QDesktopServices
from qgis.PyQt.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from scoring.benchfiles import iter_instances, load_manifest
from scoring.errors import InputError, SpatialGapError
from scoring.explain import explain_constraints

from . import layers as L
from .compat import MSG_CRITICAL, MSG_INFO, MSG_SUCCESS, MSG_WARNING
from .endpoints import load_endpoints
from .i18n import tr
from .tasks import LOG_TAG, RunTask, record_human_answer, run_dir_name

ID_ROLE = Qt.ItemDataRole.UserRole
MODALITY_FLAGS = ("geojson", "image", "together")
VERDICTS = ("correct", "wrong", "unparsed", "error", "correct_refusal", "unfounded_answer")


def read_benchmark(bench_dir: Path) -> tuple[dict, list[dict]]:
    """(manifest, instances) of a benchmark directory; InputError with the reason otherwise."""
    manifest, _ = load_manifest(bench_dir)
    instances = list(iter_instances(bench_dir))
    if not instances:
        raise InputError(tr("{path}: no instances (qa.jsonl / edit.jsonl)").format(path=bench_dir))
    return manifest, instances


class SpatialGapDock(QDockWidget):
    def __init__(self, iface, plugin=None, parent=None):
        super().__init__(tr("Spatial Gap"), parent)
        self.setObjectName("SpatialGapDock")
        self.iface = iface
        self.plugin = plugin
        self.bench_dir: Path | None = None
        self.manifest: dict = {}
        self.instances: list[dict] = []
        self.by_id: dict[str, dict] = {}
        self.current: dict | None = None
        self.verdicts: dict[str, str] = {}  # instance id -> verdict of the last run
        self.results: dict[str, dict] = {}  # instance id -> last verdict dict
        self.group = None
        self._constraint_groups: set[str] = set()
        self.scene_layers = []
        self.human_layer = None
        self.tasks: list[QgsTask] = []
        self._context = None
        self._context_index = None
        self._build_ui()
        self.reload_endpoints()

    # ------------------------------------------------------------------ UI
    def _build_ui(self):
        w = QWidget()
        v = QVBoxLayout(w)
        row = QHBoxLayout()
        self.path_edit = QLineEdit()
        self.path_edit.setPlaceholderText(tr("benchmark directory"))
        self.path_edit.returnPressed.connect(lambda: self.open_benchmark(self.path_edit.text()))
        b = QPushButton(tr("Open…"))
        b.clicked.connect(self._choose_benchmark)
        row.addWidget(self.path_edit)
        row.addWidget(b)
        v.addLayout(row)

        filters = QGridLayout()
        self.f_task, self.f_family, self.f_relation, self.f_city = (QComboBox() for _ in range(4))
        self.f_modality, self.f_verdict = QComboBox(), QComboBox()
        self.f_text = QLineEdit()
        self.f_text.setPlaceholderText(tr("id or text contains…"))
        for label, widget in (
            (tr("Task"), self.f_task),
            (tr("Family"), self.f_family),
            (tr("Relation"), self.f_relation),
            (tr("City"), self.f_city),
            (tr("Modality"), self.f_modality),
            (tr("Last verdict"), self.f_verdict),
            (tr("Search"), self.f_text),
        ):
            k = filters.count() // 2
            filters.addWidget(QLabel(label), k // 2, (k % 2) * 2)
            filters.addWidget(widget, k // 2, (k % 2) * 2 + 1)
            if isinstance(widget, QComboBox):
                widget.currentIndexChanged.connect(self.apply_filter)
        self.f_text.textChanged.connect(self.apply_filter)
        v.addLayout(filters)

        split = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        tv = QVBoxLayout(top)
        tv.setContentsMargins(0, 0, 0, 0)
        self.count_label = QLabel(tr("No benchmark open"))
        self.list = QListWidget()
        self.list.currentItemChanged.connect(self._on_selected)
        tv.addWidget(self.count_label)
        tv.addWidget(self.list)
        split.addWidget(top)
        self.text = QTextBrowser()
        self.text.setOpenExternalLinks(False)
        split.addWidget(self.text)
        self.verdict_view = QTextBrowser()
        split.addWidget(self.verdict_view)
        split.setSizes([110, 150, 190])  # the instruction and the verdict need the room
        v.addWidget(split, 1)

        self.reveal_btn = QPushButton(tr("Reveal reference answer"))
        self.reveal_btn.setCheckable(True)
        self.reveal_btn.toggled.connect(lambda _: self._show_text())
        v.addWidget(self.reveal_btn)

        model_box = QWidget()
        mv = QFormLayout(model_box)
        self.endpoint_combo = QComboBox()
        self.modality_combo = QComboBox()
        for m in MODALITY_FLAGS:
            self.modality_combo.addItem(m, m)
        self.form_combo = QComboBox()
        for f in ("open", "mcq"):
            self.form_combo.addItem(f, f)
        mv.addRow(tr("Endpoint"), self.endpoint_combo)
        mv.addRow(tr("Modality"), self.modality_combo)
        mv.addRow(tr("QA form"), self.form_combo)
        brow = QHBoxLayout()
        self.send_btn = QPushButton(tr("Send instance"))
        self.send_btn.clicked.connect(lambda: self.send(current_only=True))
        self.send_all_btn = QPushButton(tr("Send filtered set"))
        self.send_all_btn.clicked.connect(lambda: self.send(current_only=False))
        settings_btn = QPushButton(tr("Endpoints…"))
        settings_btn.clicked.connect(self._open_settings)
        for b in (self.send_btn, self.send_all_btn, settings_btn):
            brow.addWidget(b)
        mv.addRow(brow)

        human = QWidget()
        hv = QFormLayout(human)
        self.analyst_edit = QLineEdit()
        self.analyst_edit.setPlaceholderText(tr("analyst name (the run's name)"))
        self.answer_edit = QLineEdit()
        self.answer_edit.setPlaceholderText(tr("your answer, e.g. E, 12.5, yes, or a choice letter"))
        hv.addRow(tr("Analyst"), self.analyst_edit)
        hv.addRow(tr("Answer"), self.answer_edit)
        hrow = QHBoxLayout()
        self.submit_answer_btn = QPushButton(tr("Submit answer"))
        self.submit_answer_btn.clicked.connect(self.submit_human_answer)
        self.start_edit_btn = QPushButton(tr("Edit F0 on the map"))
        self.start_edit_btn.clicked.connect(self.start_human_edit)
        self.submit_edit_btn = QPushButton(tr("Submit edit"))
        self.submit_edit_btn.clicked.connect(self.submit_human_edit)
        for b in (self.submit_answer_btn, self.start_edit_btn, self.submit_edit_btn):
            hrow.addWidget(b)
        hv.addRow(hrow)
        # Model and human baseline share one tab widget: the text panels above need the height.
        self.tabs = QTabWidget()
        self.tabs.addTab(model_box, tr("Model"))
        self.tabs.addTab(human, tr("Human baseline"))
        v.addWidget(self.tabs)

        erow = QHBoxLayout()
        b1 = QPushButton(tr("Export benchmark map…"))
        b1.clicked.connect(self._export_map_dialog)
        b2 = QPushButton(tr("Export canvas…"))
        b2.clicked.connect(self._export_canvas_dialog)
        b3 = QPushButton(tr("Score runs…"))
        b3.clicked.connect(self._score_dialog)
        for b in (b1, b2, b3):
            erow.addWidget(b)
        v.addLayout(erow)
        self.setWidget(w)
        self._update_buttons()

    def _update_buttons(self):
        inst = self.current
        self.send_btn.setEnabled(inst is not None)
        self.send_all_btn.setEnabled(bool(self.instances))
        self.submit_answer_btn.setEnabled(inst is not None and inst.get("task") == "qa")
        self.start_edit_btn.setEnabled(inst is not None and inst.get("task") == "edit")
        self.submit_edit_btn.setEnabled(self.human_layer is not None)
        self.reveal_btn.setEnabled(inst is not None)

    def message(self, text: str, level=MSG_INFO, duration: int = 6):
        bar = self.iface.messageBar() if self.iface is not None else None
        if bar is not None:
            bar.pushMessage(tr("Spatial Gap"), text, level, duration)
        QgsMessageLog.logMessage(text, LOG_TAG, level)

    def reload_endpoints(self):
        current = self.endpoint_combo.currentText()
        self.endpoint_combo.clear()
        self.endpoints = {e.name: e for e in load_endpoints()}
        for name in self.endpoints:
            self.endpoint_combo.addItem(name)
        if current in self.endpoints:
            self.endpoint_combo.setCurrentText(current)

    def _open_settings(self):
        from .settings_dialog import EndpointsDialog

        EndpointsDialog(self).exec()
        self.reload_endpoints()

    # ------------------------------------------------------------------ benchmark
    def _choose_benchmark(self):
        path = QFileDialog.getExistingDirectory(self, tr("Open a benchmark directory"), self.path_edit.text())
        if path:
            self.open_benchmark(path)

    def open_benchmark(self, path) -> bool:
        try:
            manifest, instances = read_benchmark(Path(path))
        except SpatialGapError as exc:
            self.message(str(exc), MSG_CRITICAL)
            return False
        self.bench_dir = Path(path)
        self.path_edit.setText(str(path))
        self.manifest, self.instances = manifest, instances
        self.by_id = {i["id"]: i for i in instances}
        self._context = self._context_index = None
        self.verdicts.clear()
        self.results.clear()

        def fill(combo, values):
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(tr("all"), None)
            for val in values:
                combo.addItem(str(val), val)
            combo.blockSignals(False)

        fill(self.f_task, sorted({i.get("task") for i in instances}))
        fill(self.f_family, sorted({i.get("family") for i in instances if i.get("family")}))
        fill(self.f_relation, sorted({i.get("relation") for i in instances if i.get("relation")}))
        fill(self.f_city, sorted({i.get("city") for i in instances if i.get("city")}))
        self.f_modality.blockSignals(True)
        self.f_modality.clear()
        self.f_modality.addItem(tr("all"), None)
        for m in MODALITY_FLAGS:
            self.f_modality.addItem(tr("answerable in {m}").format(m=m), ("answerable", m))
            self.f_modality.addItem(tr("unanswerable in {m}").format(m=m), ("unanswerable", m))
        self.f_modality.blockSignals(False)
        self.f_verdict.blockSignals(True)
        self.f_verdict.clear()
        self.f_verdict.addItem(tr("all"), None)
        self.f_verdict.addItem(tr("not run"), "")
        for vname in VERDICTS:
            self.f_verdict.addItem(vname, vname)
        self.f_verdict.blockSignals(False)
        self.apply_filter()
        return True

    def context(self):
        if self._context is None and self.bench_dir is not None:
            self._context = L.ContextSource(self.bench_dir / "context.geojsonl")
        return self._context

    def filtered(self) -> list[dict]:
        sel = {
            k: c.currentData()
            for k, c in (
                ("task", self.f_task),
                ("family", self.f_family),
                ("relation", self.f_relation),
                ("city", self.f_city),
            )
        }
        mod = self.f_modality.currentData()
        verdict = self.f_verdict.currentData()
        text = self.f_text.text().strip().lower()
        out = []
        for inst in self.instances:
            if any(v is not None and inst.get(k) != v for k, v in sel.items()):
                continue
            if mod is not None:
                flag = (inst.get("answerable") or {}).get(mod[1], True)
                if flag != (mod[0] == "answerable"):
                    continue
            if verdict is not None and self.verdicts.get(inst["id"], "") != verdict:
                continue
            if (
                text
                and text not in inst["id"].lower()
                and text not in (inst.get("question") or inst.get("instruction") or "").lower()
            ):
                continue
            out.append(inst)
        return out

    def apply_filter(self):
        keep = self.current["id"] if self.current else None
        self.list.blockSignals(True)
        self.list.clear()
        shown = self.filtered()
        for inst in shown:
            label = inst["id"]
            if inst["id"] in self.verdicts:
                label += f"  [{self.verdicts[inst['id']]}]"
            item = QListWidgetItem(label)
            item.setData(ID_ROLE, inst["id"])
            self.list.addItem(item)
            if inst["id"] == keep:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        self.count_label.setText(
            tr("{n} of {total} instances").format(n=len(shown), total=len(self.instances))
        )
        self._update_buttons()

    def _on_selected(self, item, _previous=None):
        if item is not None:
            self.select_instance(item.data(ID_ROLE))

    # ------------------------------------------------------------------ one instance
    def select_instance(self, iid: str):
        inst = self.by_id.get(iid)
        if inst is None:
            return
        self.current = inst
        self.human_layer = None
        self.reveal_btn.setChecked(False)
        self._show_text()
        self.load_layers(inst)
        res = self.results.get(iid)
        if res is not None:
            self.show_verdict(inst, res, draw=True)
        elif inst.get("task") == "edit":
            # Before any run: the constraints as they stand on the initial scene.
            self.show_constraints(inst, None, tr("initial scene"))
        else:
            self.verdict_view.clear()
        self._update_buttons()

    def _show_text(self):
        inst = self.current
        if inst is None:
            self.text.clear()
            return
        parts = [
            f"<b>{html.escape(inst['id'])}</b> — {html.escape(inst.get('relation', ''))} "
            f"({html.escape(inst.get('family', ''))}, {html.escape(inst.get('task', ''))})"
        ]
        if inst.get("task") == "edit":
            parts.append(html.escape(inst.get("instruction", "")).replace("\n", "<br>"))
        else:
            parts.append(html.escape(inst.get("question", "")))
            choices = inst.get("choices") or []
            if choices:
                parts.append(
                    "<br>".join(f"{'ABCD'[i]}. {html.escape(str(c))}" for i, c in enumerate(choices[:4]))
                )
            flags = inst.get("answerable") or {}
            if flags and not all(flags.values()):
                parts.append(
                    "<i>"
                    + tr("Not answerable in: {m}").format(m=", ".join(k for k, v in flags.items() if not v))
                    + "</i>"
                )
        if self.reveal_btn.isChecked():
            if inst.get("task") == "edit":
                ref = json.dumps(inst.get("reference_edit"), ensure_ascii=False)
                parts.append("<b>" + tr("Reference edit:") + "</b> <code>" + html.escape(ref) + "</code>")
            else:
                ans = inst.get("answer")
                unit = inst.get("unit") or ""
                choice = inst.get("correct_choice")
                extra = f" ({tr('choice')} {choice})" if choice else ""
                parts.append(
                    "<b>"
                    + tr("Reference answer:")
                    + f"</b> {html.escape(str(ans))} {html.escape(unit)}"
                    + html.escape(extra)
                )
        self.text.setHtml("<p>" + "</p><p>".join(parts) + "</p>")

    def load_layers(self, inst: dict):
        if self.group is not None:
            try:
                L.remove_group(self.group)
            except RuntimeError:  # already deleted by the user
                pass
        self.group = L._group(tr("Spatial Gap: {id}").format(id=inst["id"]))
        self._constraint_groups = set()
        scene_group = self.group.addGroup(tr("scene"))
        layers = L.scene_layers(inst, scene_group, self.context())
        ctx = scene_group.findGroup(tr("OSM context"))
        if ctx is not None:
            ctx.setExpanded(False)
        self.scene_layers = [l for l in layers if l.fields().indexOf("role") >= 0]
        QgsProject.instance().setCrs(L.crs_of(inst))
        self.zoom_to(self.scene_layers)
        return layers

    @staticmethod
    def _extent(layers) -> QgsRectangle:
        ext = QgsRectangle()
        ext.setMinimal()
        for lyr in layers:
            lyr.updateExtents()
            ext.combineExtentWith(lyr.extent())
        return ext

    def zoom_to(self, layers, margin: float = 1.25, cap_layers=None):
        canvas = self.iface.mapCanvas() if self.iface is not None else None
        if canvas is None or not layers:
            return
        ext = self._extent(layers)
        if cap_layers:
            cap = self._extent(cap_layers)
            cap.scale(3.0)
            ext = ext.intersect(cap)
        if ext.isEmpty() or ext.width() == 0:
            ext.grow(50.0)
        ext.scale(margin)
        canvas.setDestinationCrs(QgsProject.instance().crs())
        canvas.setExtent(ext)
        canvas.refresh()

    def _sub_group(self, name: str):
        old = self.group.findGroup(name)
        if old is not None:
            L.remove_group(old)
        return self.group.insertGroup(0, name)

    def show_constraints(
        self, inst: dict, edited_scene: dict | None, title: str, verdict: dict | None = None
    ):
        """Draw the edit (if any) beside the ghost of F0 and one set of constraint layers; list
        the same constraints in the verdict panel."""
        views = explain_constraints(
            inst,
            edited_scene,
            results=(verdict or {}).get("constraints") if edited_scene is not None else None,
        )
        if self.group is not None:
            # One set of constraint drawings at a time: two overlapping sets cannot be read.
            for node in list(self.group.children()):
                if node.name() in self._constraint_groups:
                    L.remove_group(node)
            name = tr("constraints: {title}").format(title=title)
            self._constraint_groups.add(name)
            g = self._sub_group(name)
            edits = []
            if edited_scene is not None:
                edits = L.edit_layers(
                    inst,
                    edited_scene,
                    g,
                    tr("edited {id}: {title}").format(id=inst.get("target", "F0"), title=title),
                )
            drawn = L.constraint_layers(inst, views, g)
            L.collapse_legends(g)
            # Frame the features and their constraint drawings, but not beyond 3x the features'
            # own frame (a loose displacement limit is a disc hundreds of metres wide).
            self.zoom_to(self.scene_layers + edits + drawn, margin=1.1, cap_layers=self.scene_layers + edits)
        rows = []
        if verdict is not None:
            rows.append(self._verdict_header(verdict))
        for v in views:
            mark = "✔" if v.passed else "✘"
            color = L.PASS_COLOR if v.passed else L.FAIL_COLOR
            err = f" <i>({html.escape(v.error)})</i>" if v.error else ""
            rows.append(
                f"<span style='color:{color}'><b>{mark} #{v.index + 1}</b></span> "
                f"{html.escape(v.text)} — {tr('measured')}: <b>{html.escape(v.measured_text)}</b>{err}"
            )
        self.verdict_view.setHtml("<br>".join(rows))
        return views

    def _verdict_header(self, verdict: dict) -> str:
        color = L.PASS_COLOR if verdict.get("verdict") in ("correct", "correct_refusal") else L.FAIL_COLOR
        value = verdict.get("value")
        shown = (
            ""
            if value is None
            else f" — {tr('answer')}: {html.escape(json.dumps(value, ensure_ascii=False)[:300])}"
        )
        return (
            f"<b style='color:{color}'>{html.escape(str(verdict.get('verdict')))}</b>: "
            f"{html.escape(str(verdict.get('reason') or ''))}{shown}"
        )

    def show_verdict(self, inst: dict, verdict: dict, draw: bool = True, title: str | None = None):
        self.results[inst["id"]] = verdict
        self.verdicts[inst["id"]] = verdict.get("verdict", "")
        if inst.get("task") == "edit" and draw:
            self.show_constraints(
                inst, verdict.get("edited_scene"), title or verdict.get("_run", tr("model")), verdict
            )
        else:
            self.verdict_view.setHtml(self._verdict_header(verdict))

    # ------------------------------------------------------------------ model runs
    def runs_root(self) -> Path:
        return self.bench_dir / "runs"

    def send(self, current_only: bool = True, endpoint_name: str | None = None):
        """Start a RunTask for the current instance or the filtered set; returns the task(s)."""
        if self.bench_dir is None:
            return []
        name = endpoint_name or self.endpoint_combo.currentText()
        ep = self.endpoints.get(name)
        if ep is None:
            self.message(tr("Configure a model endpoint first (Endpoints…)"), MSG_WARNING)
            return []
        insts = [self.current] if current_only and self.current else ([] if current_only else self.filtered())
        if not insts:
            return []
        try:
            spec = ep.spec()
            from .auth import read_key

            key = read_key(ep.authcfg)  # on the main thread: the auth manager may prompt
        except SpatialGapError as exc:
            self.message(str(exc), MSG_CRITICAL)
            return []
        modality = self.modality_combo.currentData()
        tasks = []
        for task_name in ("qa", "edit"):
            ids = [i["id"] for i in insts if i.get("task") == task_name]
            if not ids:
                continue
            forms = [self.form_combo.currentData()] if task_name == "qa" else ["edit"]
            out = self._run_dir_for(spec, modality, task_name)
            task = RunTask(self.bench_dir, spec, key, modality, task_name, forms, ids, out, self._run_done)
            self.tasks.append(task)
            QgsApplication.taskManager().addTask(task)
            tasks.append(task)
        self.message(tr("Sent {n} instance(s) to {model}").format(n=len(insts), model=spec.name))
        return tasks

    def _run_dir_for(self, spec, modality: str, task: str) -> Path:
        """The run directory of this endpoint: resumed when it holds the same model, else a new
        numbered one (the runner refuses to mix models in one run)."""
        from scoring.runner.config import public_url

        want = {"kind": spec.kind, "base_url": public_url(spec.base_url), "model": spec.model}
        base = run_dir_name(spec.name, modality, task)
        for n in range(1, 1000):
            cand = self.runs_root() / (base if n == 1 else f"{base}-{n}")
            try:
                old = json.loads((cand / "manifest.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return cand
            model = old.get("model") or {}
            if {k: model.get(k) for k in want} == want and old.get("modality") == modality:
                return cand
        return self.runs_root() / f"{base}-{os.getpid()}"

    def _run_done(self, task: RunTask, ok: bool):
        if task in self.tasks:
            self.tasks.remove(task)
        if task.cancelled_by_user:
            self.message(
                tr("Run cancelled; finished samples are kept and a new run resumes them."), MSG_WARNING
            )
        elif not ok:
            self.message(
                tr("Run failed: {error}").format(error=task.error or tr("unknown error")), MSG_CRITICAL, 0
            )
        self.score_task_results(task)

    def score_task_results(self, task: RunTask) -> dict[str, dict]:
        from scoring.score import score_prediction

        out = {}
        finals = task.finals()
        for sid, rec in finals.items():
            inst = self.by_id.get(rec.get("instance_id"))
            if inst is None or rec.get("instance_id") not in task.ids:
                continue
            try:
                v = score_prediction(inst, rec, self.bench_dir).as_dict()
            except Exception as exc:  # noqa: BLE001 - a scorer bug must not kill the GUI
                QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, MSG_WARNING)
                v = {"verdict": "error", "reason": f"scoring failed: {exc}"}
            v["_run"] = task.spec.name
            out[inst["id"]] = v
            self.results[inst["id"]] = v
            self.verdicts[inst["id"]] = v.get("verdict", "")
        if self.current is not None and self.current["id"] in out:
            self.show_verdict(self.current, out[self.current["id"]], title=task.spec.name)
        self.apply_filter()
        if out:
            n_ok = sum(1 for v in out.values() if v.get("verdict") in ("correct", "correct_refusal"))
            self.message(
                tr("{model}: {ok} of {n} correct").format(model=task.spec.name, ok=n_ok, n=len(out)),
                MSG_SUCCESS,
            )
        return out

    # ------------------------------------------------------------------ human baseline
    def submit_human_answer(self) -> dict | None:
        inst = self.current
        if inst is None or inst.get("task") != "qa":
            return None
        from scoring.score import score_qa

        text = self.answer_edit.text().strip()
        form = self.form_combo.currentData()
        try:
            record_human_answer(
                self.bench_dir, self.runs_root(), self.analyst_edit.text(), inst, f"Answer: {text}", form=form
            )
        except (SpatialGapError, OSError) as exc:
            self.message(str(exc), MSG_CRITICAL)
            return None
        v = score_qa(inst, f"Answer: {text}", form=form).as_dict()
        v["_run"] = f"human-{self.analyst_edit.text().strip()}"
        self.show_verdict(inst, v)
        self.apply_filter()
        return v

    def start_human_edit(self):
        """An editable copy of the target for QGIS's own move / rotate / scale tools."""
        inst = self.current
        if inst is None or inst.get("task") != "edit" or self.group is None:
            return None
        g = self._sub_group(tr("human edit"))
        target = inst.get("target", "F0")
        props = next(
            (
                f.get("properties") or {}
                for f in inst["scene"]["features"]
                if (f.get("id") or (f.get("properties") or {}).get("id")) == target
            ),
            {},
        )
        # The target's attributes, editable in QGIS's attribute form (never the reference edit's).
        self._human_attrs = [a for a in props if a not in ("id", "kind")]
        self._human_props = {a: props.get(a) for a in self._human_attrs if a in props}
        layers = L.edit_layers(
            inst,
            inst["scene"],
            g,
            tr("edit {id} here").format(id=target),
            attributes=tuple(self._human_attrs),
        )
        self.human_layer = layers[-1]
        self.human_layer.startEditing()
        if self.iface is not None:
            self.iface.setActiveLayer(self.human_layer)
        self._update_buttons()
        self.message(
            tr("Move, rotate or scale the feature with QGIS's editing tools, then press Submit edit.")
        )
        return self.human_layer

    def submit_human_edit(self) -> dict | None:
        inst, layer = self.current, self.human_layer
        if inst is None or layer is None:
            return None
        from shapely import wkt as _wkt
        from shapely.geometry import shape

        from scoring.edits import EditError
        from scoring.explain import edit_from_geometries
        from scoring.score import score_edit

        feats = list(layer.getFeatures())
        target = inst.get("target", "F0")
        orig = next(
            f for f in inst["scene"]["features"] if (f.get("id") or f["properties"].get("id")) == target
        )
        try:
            edited = _wkt.loads(feats[0].geometry().asWkt())
            original = shape(orig["geometry"])
            if (
                edited.geom_type.startswith("Multi")
                and not original.geom_type.startswith("Multi")
                and len(edited.geoms) == 1
            ):
                edited = edited.geoms[0]
            after = {
                a: feats[0][a]
                for a in getattr(self, "_human_attrs", [])
                if feats[0][a] is not None and feats[0][a] != "" and not _is_null(feats[0][a])
            }
            edit = edit_from_geometries(original, edited, self._human_props, after)
        except (EditError, IndexError, ValueError) as exc:
            self.message(str(exc), MSG_CRITICAL)
            return None
        text = json.dumps(edit)
        try:
            record_human_answer(self.bench_dir, self.runs_root(), self.analyst_edit.text(), inst, text)
        except (SpatialGapError, OSError) as exc:
            self.message(str(exc), MSG_CRITICAL)
            return None
        layer.commitChanges()
        v = score_edit(inst, text).as_dict()
        v["_run"] = f"human-{self.analyst_edit.text().strip()}"
        self.show_verdict(inst, v, title=v["_run"])
        self.human_layer = None
        self._update_buttons()
        return v

    # ------------------------------------------------------------------ exports and scoring
    def export_benchmark_map(self, out_dir) -> Path | None:
        """The instance's map through scoring.render (the same bytes as a headless render)."""
        if self.current is None:
            return None
        from scoring.render import ContextIndex, render_instance

        if self._context_index is None:
            self._context_index = ContextIndex.from_file(
                self.bench_dir / "context.geojsonl", int(self.current["crs"]["epsg"])
            )
        return render_instance(self.current, self._context_index, out_dir)["png"]

    def export_canvas(self, path, size: int = 1536) -> Path:
        canvas = self.iface.mapCanvas()
        settings = canvas.mapSettings()
        ext = QgsRectangle(settings.visibleExtent())
        side = max(ext.width(), ext.height())
        c = ext.center()
        settings.setExtent(
            QgsRectangle(c.x() - side / 2, c.y() - side / 2, c.x() + side / 2, c.y() + side / 2)
        )
        settings.setOutputSize(QSize(size, size))
        job = QgsMapRendererSequentialJob(settings)
        job.start()
        job.waitForFinished()
        image = job.renderedImage()
        if not image.save(str(path), "PNG"):
            raise SpatialGapError(tr("cannot write {path}").format(path=path))
        return Path(path)

    def _export_map_dialog(self):
        if self.current is None:
            return
        d = QFileDialog.getExistingDirectory(self, tr("Folder for the benchmark map"))
        if d:
            try:
                p = self.export_benchmark_map(d)
                self.message(tr("Map written to {path}").format(path=p), MSG_SUCCESS)
            except SpatialGapError as exc:
                self.message(str(exc), MSG_CRITICAL)

    def _export_canvas_dialog(self):
        path, _ = QFileDialog.getSaveFileName(
            self, tr("Save the canvas (1536 × 1536 PNG)"), "", "PNG (*.png)"
        )
        if path:
            try:
                self.message(
                    tr("Canvas written to {path}").format(path=self.export_canvas(path)), MSG_SUCCESS
                )
            except SpatialGapError as exc:
                self.message(str(exc), MSG_CRITICAL)

    def run_dirs(self) -> list[Path]:
        root = self.runs_root() if self.bench_dir else None
        if root is None or not root.is_dir():
            return []
        return sorted(p for p in root.iterdir() if (p / "predictions.jsonl").is_file())

    def _score_dialog(self):
        runs = self.run_dirs()
        if not runs:
            self.message(
                tr("No runs yet under {path}").format(path=self.runs_root() if self.bench_dir else "-"),
                MSG_WARNING,
            )
            return
        dlg = QDialog(self)
        dlg.setWindowTitle(tr("Score runs"))
        lay = QVBoxLayout(dlg)
        lst = QListWidget()
        for r in runs:
            it = QListWidgetItem(r.name)
            it.setFlags(it.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(Qt.CheckState.Checked)
            it.setData(ID_ROLE, str(r))
            lst.addItem(it)
        lay.addWidget(QLabel(tr("Runs to score together:")))
        lay.addWidget(lst)
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        bb.accepted.connect(dlg.accept)
        bb.rejected.connect(dlg.reject)
        lay.addWidget(bb)
        if not dlg.exec():
            return
        chosen = [
            Path(lst.item(i).data(ID_ROLE))
            for i in range(lst.count())
            if lst.item(i).checkState() == Qt.CheckState.Checked
        ]
        if chosen:
            self.score_runs(chosen)

    def score_runs(self, run_dirs, out_dir=None, open_report: bool = True):
        """Score the runs in a background task, then open the HTML report."""
        out = Path(out_dir) if out_dir else self.bench_dir / "results"
        task = ScoreTask(self.bench_dir, run_dirs, out, self._score_done if open_report else None)
        self.tasks.append(task)
        QgsApplication.taskManager().addTask(task)
        return task

    def _score_done(self, task, ok):
        if task in self.tasks:
            self.tasks.remove(task)
        if ok and task.report:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(task.report)))
        elif not ok:
            self.message(tr("Scoring failed: {error}").format(error=task.error), MSG_CRITICAL, 0)

    def cancel_tasks(self):
        for t in list(self.tasks):
            try:
                t.cancel()
            except RuntimeError:
                pass


def _is_null(value) -> bool:
    from qgis.PyQt.QtCore import QVariant

    return isinstance(value, QVariant) and value.isNull()


class ScoreTask(QgsTask):
    def __init__(self, bench_dir, run_dirs, out_dir, on_done=None):
        super().__init__(tr("Spatial Gap: scoring {n} run(s)").format(n=len(run_dirs)), QgsTask.CanCancel)
        self.bench_dir, self.run_dirs, self.out_dir = (
            Path(bench_dir),
            [Path(r) for r in run_dirs],
            Path(out_dir),
        )
        self.on_done = on_done
        self.error = None
        self.report = None
        self.summary = None

    def run(self):
        try:
            from scoring.score import score_runs, write_report

            self.summary = score_runs(self.bench_dir, self.run_dirs, self.out_dir)
            self.report = write_report([self.out_dir], self.out_dir / "report.html")
            return True
        except SpatialGapError as exc:
            self.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - must not escape run()
            self.error = f"{type(exc).__name__}: {exc}"
            QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, MSG_WARNING)
        return False

    def finished(self, result):
        if self.on_done is not None:
            try:
                self.on_done(self, result)
            except Exception:  # noqa: BLE001
                QgsMessageLog.logMessage(traceback.format_exc(), LOG_TAG, MSG_WARNING)
