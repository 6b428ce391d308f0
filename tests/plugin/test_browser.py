"""The instance browser: a sortable table with relation names and tooltips, cascading filters, a
question pane with every choice in the MCQ form only, and the reference edit drawn on request."""

from __future__ import annotations

from qgis.core import QgsProject
from qgis.PyQt.QtCore import Qt

from scoring.relations import CATALOGUE


def test_table_names_relations_sorts_and_explains(dock, small_bench, instances):
    dock.open_benchmark(small_bench)
    table = dock.list
    assert table.count() == len(instances)
    relation_col = table.COLUMNS.index("relation")
    for row in range(table.count()):
        inst = instances[table.item(row).data(Qt.ItemDataRole.UserRole)]
        rel = CATALOGUE[inst["relation"]]
        cell = table.item(row, relation_col)
        assert cell.text() == f"{rel.code} · {rel.name}"
        assert cell.toolTip().startswith(rel.definition[:50])
        prompt = inst.get("question") or inst.get("instruction")
        assert table.item(row).toolTip().startswith(prompt[:50])
    for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
        table.sortItems(relation_col, order)
        texts = [table.item(row, relation_col).text() for row in range(table.count())]
        assert texts == sorted(texts, reverse=order == Qt.SortOrder.DescendingOrder)
    # Selecting a row shows that instance (whatever the sort order).
    table.setCurrentRow(3)
    assert dock.current is not None and dock.current["id"] == table.item(3).data(Qt.ItemDataRole.UserRole)
    # The sort order survives a refill (filter change).
    dock.filters.text_edit.setText("0")
    texts = [table.item(row, relation_col).text() for row in range(table.count())]
    assert texts == sorted(texts, reverse=True)


def test_filters_cascade(dock, small_bench, instances):
    dock.open_benchmark(small_bench)
    relations = dock.filters.field_combos["relation"]

    def offered():
        return {relations.itemData(k) for k in range(1, relations.count())}

    assert offered() == {i["relation"] for i in instances.values()}
    dock.filters.select("family", "ordering")
    assert offered() == {i["relation"] for i in instances.values() if i["family"] == "ordering"}
    dock.filters.select("relation", "O02")
    families = dock.filters.field_combos["family"]
    assert {families.itemData(k) for k in range(1, families.count())} == {"ordering"}
    # Back to "all": every relation again.
    dock.filters.field_combos["family"].setCurrentIndex(0)
    dock.filters.field_combos["relation"].setCurrentIndex(0)
    assert offered() == {i["relation"] for i in instances.values()}


def test_question_pane_shows_choices_in_the_mcq_form_only(dock, small_bench, instances):
    dock.open_benchmark(small_bench)
    inst = next(i for i in instances.values() if i["task"] == "qa" and len(i.get("choices") or []) == 4)
    dock.select_instance(inst["id"])
    form = dock.model_panel.form_combo
    form.setCurrentIndex(form.findData("mcq"))
    text = dock.text.toPlainText()
    for letter, choice in zip("ABCD", inst["choices"], strict=True):
        assert f"{letter}. {choice}" in text
    form.setCurrentIndex(form.findData("open"))
    text = dock.text.toPlainText()
    assert not any(f"{letter}. " in text for letter in "ABCD")


def test_reference_edit_is_drawn_on_request(dock, small_bench, instances):
    dock.open_benchmark(small_bench)
    inst = next(i for i in instances.values() if i["task"] == "edit" and i["relation"] == "M01")
    dock.select_instance(inst["id"])
    group = QgsProject.instance().layerTreeRoot().findGroup(f"Spatial Gap: {inst['id']}")
    assert group.findGroup("constraints: reference edit") is None
    dock.reveal_btn.setChecked(True)
    drawn = group.findGroup("constraints: reference edit")
    assert drawn is not None
    names = [n.layer().name() for n in drawn.findLayers()]
    assert any(name.startswith("edited F0") for name in names)
    assert "✘" not in dock.verdict_view.toPlainText()  # the reference edit meets every constraint
    dock.reveal_btn.setChecked(False)
    assert group.findGroup("constraints: reference edit") is None
    assert group.findGroup("constraints: initial scene") is not None


def test_table_starts_in_ascending_id_order(dock, small_bench, instances):
    """Qt's header starts with a descending indicator; the table opens with ids ascending."""
    dock.open_benchmark(small_bench)
    ids = [dock.list.item(row).text() for row in range(dock.list.count())]
    assert ids == sorted(ids) and len(ids) == len(instances)
    assert dock.list.horizontalHeader().sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
