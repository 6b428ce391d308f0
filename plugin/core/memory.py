"""What the dock remembers between QGIS sessions (QgsSettings, under "spatialgap/memory/"): the last
benchmark and its filters, the endpoint, modality and QA form, the analyst's name, the splitter
sizes, and where the dock was (area, floating geometry, open or closed)."""

from __future__ import annotations

from pathlib import Path

from qgis.core import QgsSettings
from qgis.PyQt.QtCore import QByteArray, Qt

from ..utils.compat import enum_int

PREFIX = "spatialgap/memory/"
FILTER_KEYS = ("task", "family", "relation", "city")
ALL = "<all>"  # a filter left at "all" ("" is a real value: the verdict filter's "not run")


def settings() -> QgsSettings:
    return QgsSettings()


def forget() -> None:
    """Remove everything the dock remembers."""
    settings().remove(PREFIX.rstrip("/"))


def value(key: str, default=None):
    return settings().value(PREFIX + key, default)


def set_value(key: str, val) -> None:
    settings().setValue(PREFIX + key, val)


def _set_combo(combo, data) -> bool:
    index = combo.findData(data)
    if index < 0:
        index = combo.findText(str(data)) if data is not None else -1
    if index >= 0:
        combo.setCurrentIndex(index)
    return index >= 0


class DockMemory:
    """Saves the dock's state as it changes; `restore` puts it back (the plugin calls it once,
    when it creates the dock)."""

    def __init__(self, dock):
        self.dock = dock
        self.restoring = False
        filters = dock.filters
        for name, combo in filters.field_combos.items():
            combo.currentIndexChanged.connect(lambda _i, n=name, c=combo: self._save_combo(f"filter/{n}", c))
        filters.answerability_combo.currentIndexChanged.connect(
            lambda _i: self._save_combo("filter/answerability", filters.answerability_combo)
        )
        filters.verdict_combo.currentIndexChanged.connect(
            lambda _i: self._save_combo("filter/verdict", filters.verdict_combo)
        )
        filters.text_edit.textChanged.connect(lambda text: self._save("filter/text", text))
        panel = dock.model_panel
        panel.endpoint_combo.currentTextChanged.connect(lambda text: self._save("endpoint", text))
        panel.modality_combo.currentIndexChanged.connect(
            lambda _i: self._save_combo("modality", panel.modality_combo)
        )
        panel.form_combo.currentIndexChanged.connect(lambda _i: self._save_combo("qa_form", panel.form_combo))
        dock.human_panel.analyst_edit.textChanged.connect(lambda text: self._save("analyst", text))
        dock.splitter.splitterMoved.connect(
            lambda _pos, _index: self._save("splitter", dock.splitter.sizes())
        )
        dock.dockLocationChanged.connect(lambda area: self._save("dock/area", enum_int(area)))
        dock.topLevelChanged.connect(lambda floating: self._save("dock/floating", bool(floating)))
        dock.visibilityChanged.connect(self._visibility_changed)

    def _save(self, key: str, val) -> None:
        if not self.restoring:
            set_value(key, val)

    def _save_combo(self, key: str, combo) -> None:
        data = combo.currentData()
        # Filters hold strings, (answerable, modality) pairs or None ("all"): stored as text.
        if isinstance(data, (tuple, list)):
            data = f"{int(bool(data[0]))}:{data[1]}"
        self._save(key, ALL if data is None else str(data))

    def _visibility_changed(self, visible: bool) -> None:
        # A closing QGIS hides the dock too: only the user's own close is remembered.
        main = self.dock.parentWidget()
        if main is not None and not main.isVisible():
            return
        self._save("dock/visible", bool(visible))
        if self.dock.isFloating():
            self._save("dock/geometry", self.dock.saveGeometry())

    # ------------------------------------------------------------------ restore
    def restore(self, open_last: bool = True) -> None:
        dock = self.dock
        self.restoring = True
        try:
            analyst = value("analyst", "")
            if analyst:
                dock.human_panel.analyst_edit.setText(str(analyst))
            panel = dock.model_panel
            endpoint = value("endpoint", "")
            if endpoint:
                panel.endpoint_combo.setCurrentText(str(endpoint))
            for key, combo in (("modality", panel.modality_combo), ("qa_form", panel.form_combo)):
                saved = value(key, ALL)
                if saved not in (ALL, None, ""):
                    _set_combo(combo, str(saved))
            sizes = value("splitter")
            if isinstance(sizes, (list, tuple)) and len(sizes) == dock.splitter.count():
                dock.splitter.setSizes([int(s) for s in sizes])
            last = value("benchmark", "")
            if open_last and last and Path(str(last)).is_dir():
                if dock.open_benchmark(str(last)):
                    self.restore_filters()
        finally:
            self.restoring = False

    def restore_filters(self) -> None:
        filters = self.dock.filters
        for name in FILTER_KEYS:
            saved = value(f"filter/{name}", ALL)
            if saved not in (ALL, None, ""):
                _set_combo(filters.field_combos[name], str(saved))
        saved = str(value("filter/answerability", "") or "")
        if ":" in saved:
            flag, modality = saved.split(":", 1)
            _set_combo(filters.answerability_combo, (flag == "1", modality))
        saved_verdict = value("filter/verdict", ALL)
        if saved_verdict not in (ALL, None):
            _set_combo(filters.verdict_combo, str(saved_verdict))
        filters.text_edit.setText(str(value("filter/text", "") or ""))

    def benchmark_opened(self, path) -> None:
        self._save("benchmark", str(path))


def dock_area(default=Qt.DockWidgetArea.RightDockWidgetArea):
    """The dock area the dock was last in."""
    saved = value("dock/area")
    try:
        area = Qt.DockWidgetArea(int(saved))
    except (TypeError, ValueError):
        return default
    return area if area != Qt.DockWidgetArea.NoDockWidgetArea else default


def restore_floating(dock) -> None:
    """Float the dock where it floated last time."""
    if str(value("dock/floating", "false")).lower() in ("true", "1"):
        geometry = value("dock/geometry")
        dock.setFloating(True)
        if isinstance(geometry, QByteArray):
            dock.restoreGeometry(geometry)


def dock_was_open() -> bool:
    return str(value("dock/visible", "false")).lower() in ("true", "1")
