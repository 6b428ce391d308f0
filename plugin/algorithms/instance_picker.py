"""Processing's instance picker: the edit instances of the chosen benchmark in an editable combo
box (ids still typed in the modeler and in batch mode), filled again when the benchmark changes."""

from __future__ import annotations

from qgis.PyQt.QtWidgets import QComboBox

from scoring.errors import SpatialGapError
from scoring.formats.benchmark import Benchmark
from scoring.vocab import Task

from ..utils.i18n import tr

try:  # Processing's own Python wrappers (absent only in a QGIS without the Processing plugin)
    from processing.gui.wrappers import DIALOG_STANDARD, WidgetWrapper
except ImportError:  # pragma: no cover - Processing ships with every QGIS build the plugin targets
    WidgetWrapper, DIALOG_STANDARD = object, None


def edit_instance_ids(bench_dir) -> list[str]:
    """The benchmark's edit instance ids ([] when it cannot be opened)."""
    if not bench_dir:
        return []
    try:
        bench = Benchmark.open(str(bench_dir), (Task.EDIT,), require_instances=True)
    except (SpatialGapError, OSError, ValueError):
        return []
    return [inst["id"] for inst in bench.all_instances()]


class InstancePickerWrapper(WidgetWrapper):
    BENCH_PARAMETER = "BENCH"

    def createWidget(self, **kwargs):  # noqa: N802 - Processing's API
        combo = QComboBox()
        combo.setEditable(True)
        combo.setToolTip(tr("An edit instance of the benchmark chosen above"))
        combo.currentTextChanged.connect(lambda _text: self.widgetValueHasChanged.emit(self))
        return combo

    def postInitialize(self, wrappers):  # noqa: N802 - Processing's API
        if self.dialogType != DIALOG_STANDARD:
            return
        for wrapper in wrappers:
            if wrapper.parameterDefinition().name() == self.BENCH_PARAMETER:
                self.fill(wrapper.parameterValue())
                wrapper.widgetValueHasChanged.connect(lambda w: self.fill(w.parameterValue()))
                break

    def fill(self, bench_dir) -> None:
        current = self.widget.currentText()
        self.widget.blockSignals(True)
        self.widget.clear()
        self.widget.addItems(edit_instance_ids(bench_dir))
        self.widget.setCurrentText(current)
        self.widget.blockSignals(False)

    def setValue(self, value):  # noqa: N802 - Processing's API
        self.widget.setCurrentText("" if value is None else str(value))

    def value(self):
        return self.widget.currentText().strip()
