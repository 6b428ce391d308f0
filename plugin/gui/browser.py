"""The dock's instance browser: a sortable table (id, relation by name, task, family, last
verdict) with the question or instruction and the relation's definition as tooltips."""

from __future__ import annotations

from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from scoring.formats.records import Instance

from ..utils.i18n import tr
from ..utils.text import verdict_name

ID_ROLE = Qt.ItemDataRole.UserRole  # the instance id on each row's first cell
TOOLTIP_CHARS = 400


def relation_info(code: str) -> tuple[str, str]:
    """(name, definition) of a relation from the catalogue; the code alone when unknown."""
    from scoring.relations import CATALOGUE  # the single source of truth for a relation

    rel = CATALOGUE.get(code)
    return (rel.name, rel.definition) if rel is not None else (code, "")


def _short(text: str) -> str:
    return text if len(text) <= TOOLTIP_CHARS else text[: TOOLTIP_CHARS - 1] + "…"


class InstanceTable(QTableWidget):
    """One row per shown instance; the list-like helpers (count, item, row_text, select_id) keep
    callers independent of the columns."""

    COLUMNS = ("id", "relation", "task", "family", "verdict")

    def __init__(self, parent=None):
        super().__init__(0, len(self.COLUMNS), parent)
        self.setHorizontalHeaderLabels(
            [tr("Instance"), tr("Relation"), tr("Task"), tr("Family"), tr("Last verdict")]
        )
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(self.COLUMNS.index("relation"), QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        # The dock is narrow: task and family are in the id and the relation already (and in
        # the filters); the relation's name is what the codes hide.
        for name in ("task", "family"):
            self.setColumnHidden(self.COLUMNS.index(name), True)
        # Qt's header starts with a descending indicator: ids read top-down from the first.
        header.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        self.setSortingEnabled(True)

    def fill(
        self, instances: list[Instance], verdicts: dict[str, str], runs: dict[str, str], keep: str | None
    ):
        """Show these instances (the current sort order kept); select `keep` if shown."""
        self.blockSignals(True)
        sorting = self.isSortingEnabled()
        self.setSortingEnabled(False)  # rows must not move while they are filled
        self.clearContents()
        self.setRowCount(len(instances))
        names: dict[str, tuple[str, str]] = {}
        for row, inst in enumerate(instances):
            code = str(inst.get("relation", ""))
            name, definition = names.setdefault(code, relation_info(code))
            verdict = verdict_name(verdicts.get(inst["id"], ""))
            run = runs.get(inst["id"], "")
            cells = (
                (inst["id"], inst.get("question") or inst.get("instruction") or ""),
                (f"{code} · {name}", definition),
                (str(inst.get("task", "")), ""),
                (str(inst.get("family", "")), ""),
                (f"{verdict} · {run}" if verdict and run else verdict, ""),
            )
            for col, (text, tip) in enumerate(cells):
                cell = QTableWidgetItem(text)
                if tip:
                    cell.setToolTip(_short(tip))
                if col == 0:
                    cell.setData(ID_ROLE, inst["id"])
                self.setItem(row, col, cell)
        self.setSortingEnabled(sorting)
        self.select_id(keep)
        self.blockSignals(False)
        self.resizeColumnToContents(0)
        self.resizeColumnToContents(self.COLUMNS.index("verdict"))

    # list-like helpers -------------------------------------------------------------
    def count(self) -> int:
        return self.rowCount()

    def item(self, row: int, column: int = 0):  # QListWidget's item(row)
        return super().item(row, column)

    def row_text(self, row: int) -> str:
        return "  ".join(
            c.text()
            for c in (super(InstanceTable, self).item(row, k) for k in range(self.columnCount()))
            if c
        )

    def ids(self) -> list[str]:
        return [self.item(row).data(ID_ROLE) for row in range(self.rowCount())]

    def select_id(self, instance_id: str | None) -> bool:
        for row in range(self.rowCount()):
            if instance_id is not None and self.item(row).data(ID_ROLE) == instance_id:
                self.setCurrentCell(row, 0)
                return True
        return False

    def setCurrentRow(self, row: int) -> None:  # noqa: N802 - QListWidget's name
        self.setCurrentCell(row, 0)

    def current_id(self) -> str | None:
        row = self.currentRow()
        cell = self.item(row) if row >= 0 else None
        return cell.data(ID_ROLE) if cell is not None else None
