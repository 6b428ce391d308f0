"""The dock's instance filters: task, family, relation, city, answerability per modality, the
last verdict, and a text search over ids and questions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from qgis.PyQt.QtCore import pyqtSignal
from qgis.PyQt.QtWidgets import QComboBox, QGridLayout, QLabel, QLineEdit, QWidget

from scoring.formats.records import Instance
from scoring.vocab import MODALITIES, VERDICTS

from ..utils.i18n import tr
from ..utils.text import verdict_name

# Instance fields offered as exact-match filters, in the order of the combo boxes.
FIELDS = ("task", "family", "relation", "city")
NOT_RUN = ""  # the verdict filter's value for instances without a verdict yet


@dataclass(frozen=True)
class Selection:
    """What the filter widgets ask for; None means "all"."""

    fields: dict[str, str | None]
    answerability: tuple[bool, str] | None  # (answerable?, modality)
    verdict: str | None
    text: str

    def keeps(self, inst: Instance, verdicts: dict[str, str]) -> bool:
        if any(want is not None and inst.get(key) != want for key, want in self.fields.items()):
            return False
        if self.answerability is not None:
            answerable, modality = self.answerability
            if (inst.get("answerable") or {}).get(modality, True) != answerable:
                return False
        if self.verdict is not None and verdicts.get(inst["id"], NOT_RUN) != self.verdict:
            return False
        if self.text:
            prompt = (inst.get("question") or inst.get("instruction") or "").lower()
            return self.text in inst["id"].lower() or self.text in prompt
        return True


class FilterPanel(QWidget):
    """Combo boxes filled from an opened benchmark; `changed` fires on any edit."""

    changed = pyqtSignal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.instances: list[Instance] = []
        self.field_combos = {name: QComboBox() for name in FIELDS}
        self.answerability_combo = QComboBox()
        self.verdict_combo = QComboBox()
        self.text_edit = QLineEdit()
        self.text_edit.setPlaceholderText(tr("id or text contains…"))
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        labelled = (
            (tr("Task"), self.field_combos["task"]),
            (tr("Family"), self.field_combos["family"]),
            (tr("Relation"), self.field_combos["relation"]),
            (tr("City"), self.field_combos["city"]),
            (tr("Modality"), self.answerability_combo),
            (tr("Last verdict"), self.verdict_combo),
            (tr("Search"), self.text_edit),
        )
        for n, (label, widget) in enumerate(labelled):  # two label + widget pairs per row
            grid.addWidget(QLabel(label), n // 2, (n % 2) * 2)
            grid.addWidget(widget, n // 2, (n % 2) * 2 + 1)
            if isinstance(widget, QComboBox):
                widget.currentIndexChanged.connect(lambda _index: self.changed.emit())
        self.text_edit.textChanged.connect(lambda _text: self.changed.emit())

    def fill(self, instances: list[Instance]) -> None:
        """Offer the values present in these instances; every filter back to "all"."""
        self.instances = instances
        for name, combo in self.field_combos.items():
            values = sorted({str(inst.get(name)) for inst in instances if inst.get(name)})
            _refill(combo, [(_label(name, value), value) for value in values])
        _refill(
            self.answerability_combo,
            [
                item
                for modality in MODALITIES
                for item in (
                    (tr("answerable in {m}").format(m=modality), (True, str(modality))),
                    (tr("unanswerable in {m}").format(m=modality), (False, str(modality))),
                )
            ],
        )
        _refill(
            self.verdict_combo, [(tr("not run"), NOT_RUN)] + [(verdict_name(v), str(v)) for v in VERDICTS]
        )

    def cascade(self) -> None:
        """Each field offers only the values left by the other field filters (a relation list
        narrowed to the chosen family); a chosen value stays offered."""
        chosen = {name: combo.currentData() for name, combo in self.field_combos.items()}
        for name, combo in self.field_combos.items():
            others = {k: v for k, v in chosen.items() if k != name and v is not None}
            values = sorted(
                {
                    str(inst.get(name))
                    for inst in self.instances
                    if inst.get(name) and all(str(inst.get(k)) == v for k, v in others.items())
                }
                | ({chosen[name]} if chosen[name] is not None else set())
            )
            if [combo.itemData(k) for k in range(1, combo.count())] == values:
                continue
            _refill(combo, [(_label(name, value), value) for value in values])
            combo.blockSignals(True)
            combo.setCurrentIndex(max(combo.findData(chosen[name]), 0) if chosen[name] is not None else 0)
            combo.blockSignals(False)

    def select(self, name: str, value: str) -> None:
        """Set one field filter (task, family, relation, city) to a value it offers."""
        combo = self.field_combos[name]
        combo.setCurrentIndex(combo.findData(value))

    def selection(self) -> Selection:
        answerability = self.answerability_combo.currentData()
        return Selection(
            fields={name: combo.currentData() for name, combo in self.field_combos.items()},
            answerability=tuple(answerability) if answerability is not None else None,
            verdict=self.verdict_combo.currentData(),
            text=self.text_edit.text().strip().lower(),
        )


def _label(name: str, value: str) -> str:
    """A relation by code and name; other values as they are."""
    if name != "relation":
        return value
    from ..gui.browser import relation_info

    return f"{value} · {relation_info(value)[0]}"


def _refill(combo: QComboBox, items: Sequence[tuple[str, object]]) -> None:
    combo.blockSignals(True)
    combo.clear()
    combo.addItem(tr("all"), None)
    for label, data in items:
        combo.addItem(label, data)
    combo.blockSignals(False)
