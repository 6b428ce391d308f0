"""The human baseline: an analyst answers a QA instance, or moves / rotates / scales F0 with
QGIS's own editing tools (and sets attributes in its attribute form); the answer is recorded as a
run named after the analyst and scored like a model's."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from qgis.core import QgsLayerTreeGroup, QgsVectorLayer
from qgis.PyQt.QtCore import QVariant
from qgis.PyQt.QtWidgets import QFormLayout, QHBoxLayout, QLineEdit, QPushButton, QWidget
from shapely.geometry import shape

from scoring.constraints.explain import edit_from_geometries
from scoring.errors import SpatialGapError
from scoring.formats.benchmark import Benchmark
from scoring.formats.records import Instance
from scoring.formats.rundir import record_answer
from scoring.vocab import Form, Modality

from ..core import layers
from ..core.layer_util import SKIP_MEMORY_CHECK
from ..utils.i18n import tr

HUMAN_KIND = "human"
# What the "Cannot be determined" button records: refusal forms the reader knows (scoring/answers/text.py),
# for a question and for an edit whose constraints cannot all be met.
QA_REFUSAL = "Answer: cannot be determined"
EDIT_REFUSAL = "Cannot be determined: the constraints cannot all be met."
# Attributes of the target an analyst never edits: its identity and its kind.
FIXED_ATTRIBUTES = ("id", "kind")


def record_human_answer(
    bench: Benchmark,
    runs_root: Path,
    analyst: str,
    instance: Instance,
    text: str,
    form: str = Form.OPEN,
    modality: Modality = Modality.GEOJSON,
) -> Path:
    """Append an analyst's answer to the run "human-<analyst>"; returns the run directory."""
    if not analyst.strip():
        raise SpatialGapError(tr("give the analyst's name first"))
    return record_answer(bench, runs_root, analyst, instance, text, form, modality, kind=HUMAN_KIND)


def human_run_name(analyst: str) -> str:
    return f"{HUMAN_KIND}-{analyst.strip()}"


class HumanBaselinePanel(QWidget):
    """The analyst's name and answer, and the buttons of the human baseline."""

    def __init__(self, parent=None):
        super().__init__(parent)
        form = QFormLayout(self)
        self.analyst_edit = QLineEdit()
        self.analyst_edit.setPlaceholderText(tr("analyst name (the run's name)"))
        self.answer_edit = QLineEdit()
        self.answer_edit.setPlaceholderText(tr("your answer, e.g. E, 12.5, yes, or a choice letter"))
        form.addRow(tr("Analyst"), self.analyst_edit)
        form.addRow(tr("Answer"), self.answer_edit)
        self.blind_btn = QPushButton(tr("Blind session"))
        self.blind_btn.setCheckable(True)
        self.blind_btn.setToolTip(
            tr("No verdict and no reference until you end the session; one answer per instance")
        )
        form.addRow(self.blind_btn)
        self.submit_answer_btn = QPushButton(tr("Submit answer"))
        self.start_edit_btn = QPushButton(tr("Edit F0 on the map"))
        self.submit_edit_btn = QPushButton(tr("Submit edit"))
        self.refuse_btn = QPushButton(tr("Cannot be determined"))
        self.refuse_btn.setToolTip(
            tr("Answer that the information given is insufficient, or that no edit meets every constraint")
        )
        buttons = QHBoxLayout()
        for button in (self.submit_answer_btn, self.start_edit_btn, self.submit_edit_btn, self.refuse_btn):
            buttons.addWidget(button)
        form.addRow(buttons)

    @property
    def analyst(self) -> str:
        return self.analyst_edit.text().strip()


@dataclass
class HumanEdit:
    """An editable copy of an edit instance's target, and the attributes offered for editing."""

    instance: Instance
    layer: QgsVectorLayer
    attributes: list[str] = field(default_factory=list)
    before: dict = field(default_factory=dict)  # the target's original attribute values

    @classmethod
    def start(cls, inst: Instance, group: QgsLayerTreeGroup) -> HumanEdit:
        target = inst.get("target", "F0")
        props = layers.scene_feature(inst["scene"], target).get("properties") or {}
        # The target's own attributes, editable in QGIS's attribute form (never the reference edit's).
        attributes = [name for name in props if name not in FIXED_ATTRIBUTES]
        edit_layers = layers.edit_layers(
            inst,
            inst["scene"],
            group,
            tr("edit {id} here").format(id=target),
            attributes=tuple(attributes),
        )
        layer = edit_layers[-1]
        # The analyst's work: QGIS's "temporary layers will be lost" prompt applies to it.
        layer.removeCustomProperty(SKIP_MEMORY_CHECK)
        layer.startEditing()
        return cls(inst, layer, attributes, {name: props[name] for name in attributes})

    def to_edit(self) -> dict:
        """The edit JSON that turns the original target into the analyst's; EditError for a change
        that is not a move / rotate / scale, IndexError when the layer lost its feature."""
        feature = next(iter(self.layer.getFeatures()), None)
        if feature is None:
            raise IndexError(tr("the edit layer holds no feature"))
        original = layers.scene_feature(self.instance["scene"], self.instance.get("target", "F0"))
        edited = layers.to_shapely(feature.geometry(), like=original["geometry"]["type"])
        after = {
            name: feature[name]
            for name in self.attributes
            if feature[name] is not None and feature[name] != "" and not _is_null(feature[name])
        }
        return edit_from_geometries(shape(original["geometry"]), edited, self.before, after)


def _is_null(value) -> bool:
    return isinstance(value, QVariant) and value.isNull()
