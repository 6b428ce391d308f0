"""The French translation is complete and loads from the compiled .qm."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from qgis.PyQt.QtCore import QCoreApplication

from plugin.utils.i18n import install_translator, qm_path, tr

ROOT = Path(__file__).resolve().parents[2]


def test_every_plugin_string_has_a_french_translation():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "i18n.py"), "check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_french_translation_loads(qgis_iface, qgis_app, tmp_path):
    import shutil

    if shutil.which("lrelease") is None:
        pytest.skip("lrelease (qttools5-dev-tools) is not installed: `make setup` installs it")
    # Compile the .ts source afresh (the shipped .qm is a build product: `make i18n`).
    subprocess.run(
        [
            "lrelease",
            "-silent",
            str(ROOT / "i18n" / "spatialgap_fr.ts"),
            "-qm",
            str(tmp_path / "spatialgap_fr.qm"),
        ],
        check=True,
    )
    assert qm_path("fr", [tmp_path]) is not None
    ts = ET.parse(ROOT / "i18n" / "spatialgap_fr.ts").getroot()
    # Obsolete messages (kept for their translation) are not compiled into the .qm.
    pairs = [
        (m.findtext("source"), m.findtext("translation"))
        for m in ts.iter("message")
        if m.find("translation").get("type") is None
    ]
    assert tr("Send instance") == "Send instance"
    translator = install_translator("fr", [tmp_path])
    assert translator is not None
    try:
        # The compiled .qm holds the same translations as the .ts source.
        assert all(tr(src) == fr for src, fr in pairs)
        assert tr("Send instance") == "Envoyer l'instance"
        from plugin.gui.dock import SpatialGapDock

        dock = SpatialGapDock(qgis_iface)
        assert dock.model_panel.send_btn.text() == "Envoyer l'instance"
        dock.deleteLater()
        _map_labels_read_in_french(tmp_path / "every-relation")
    finally:
        QCoreApplication.removeTranslator(translator)
    assert tr("Send instance") == "Send instance"
    assert install_translator("en") is None


def _map_labels_read_in_french(bench: Path) -> None:
    """Verdict names, states, numbers and the constraint sentences on the map, all in French."""
    import json

    from plugin.utils.sentences import found, requirement
    from scoring.build.builder import build_benchmark
    from scoring.constraints.explain import explain_constraints

    build_benchmark(None, bench, seed=0, n_qa=0, n_edit=1, jobs=1, progress=False)
    for line in (bench / "edit.jsonl").read_text(encoding="utf-8").splitlines():
        for view in explain_constraints(json.loads(line)):
            # Every relation's constraints have a French template (none left in English).
            assert requirement(view) != view.text, view.text
            assert found(view) != view.sentence, view.sentence

    from plugin.core.constraint_layers import label_text
    from plugin.utils.i18n import number
    from plugin.utils.text import reason_text, state_name, verdict_name
    from scoring.constraints.explain import ConstraintView

    assert verdict_name("correct") == "correcte" and state_name("aborted") == "abandonnée"
    assert reason_text("constraint 1 fails: F0 is within 20 m of F1") == (
        "la contrainte 1 n'est pas respectée (voir #1 ci-dessous)"
    )
    assert number(1545) == "1\u202f545" and number(120.0, 2) == "120,00"
    distance = {"measure": "within_distance", "args": ["F0", "F2"], "params": {"distance": 20.0}, "op": "is"}
    view = ConstraintView(
        0,
        "F0 is not within 20 m of F2",
        "within_distance",
        "is",
        True,
        False,
        None,
        constraint={**distance, "value": False},
    )
    assert label_text(view) == "#1 F0 n'est pas à moins de 20 m de F2 — respectée ✔"
    moved = {"measure": "displacement", "args": ["F0"], "op": "at_most", "max": 369.5, "unit": "m"}
    view = ConstraintView(1, "…", "displacement", "at_most", False, 149.97, "m", constraint=moved)
    assert label_text(view) == (
        "#2 le déplacement du centroïde de F0 depuis sa position initiale vaut au plus 369,5 m — 149,97 m ✘"
    )


TS_BEFORE = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr_FR">
  <context>
    <name>Other</name>
    <message>
      <source>Kept</source>
      <translation>Gardé</translation>
    </message>
  </context>
  <context>
    <name>SpatialGap</name>
    <!-- a translator's note -->
    <message>
      <location filename="../plugin/dock.py" line="3"/>
      <source>Open…</source>
      <translation>Ouvrir…</translation>
    </message>
    <message>
      <source>Gone</source>
      <translation>Parti</translation>
    </message>
    <message>
      <source>Back again</source>
      <translation type="obsolete">De retour</translation>
    </message>
  </context>
</TS>
"""


def _tool(root, *args):
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "i18n.py"), *args, "--root", str(root)],
        capture_output=True,
        text=True,
    )


def test_update_keeps_translations_language_and_the_rest_of_the_file(tmp_path):
    """An update used to rewrite the whole file: fr_FR became fr, other contexts, locations and
    comments were lost. Now it only adds, retires and revives messages."""
    (tmp_path / "plugin").mkdir()
    (tmp_path / "i18n").mkdir()
    (tmp_path / "plugin" / "dock.py").write_text(
        'tr("Open…")\ntr("Back again")\ntr("Brand new")\n', encoding="utf-8"
    )
    ts = tmp_path / "i18n" / "spatialgap_fr.ts"
    ts.write_text(TS_BEFORE, encoding="utf-8")
    assert _tool(tmp_path, "update").returncode == 0
    root = ET.parse(ts).getroot()
    assert root.get("language") == "fr_FR"
    messages = {m.findtext("source"): m for m in root.iter("message")}
    assert messages["Kept"].findtext("translation") == "Gardé"  # another context, untouched
    assert messages["Open…"].findtext("translation") == "Ouvrir…"
    assert messages["Open…"].find("location").get("line") == "3"
    assert messages["Open…"].find("translation").get("type") is None
    assert messages["Gone"].find("translation").get("type") == "obsolete"
    assert messages["Gone"].findtext("translation") == "Parti"
    assert messages["Back again"].find("translation").get("type") is None  # revived as it was
    assert messages["Brand new"].find("translation").get("type") == "unfinished"
    assert "a translator's note" in ts.read_text(encoding="utf-8")
    # A second update has nothing to do and leaves the bytes alone.
    first = ts.read_bytes()
    _tool(tmp_path, "update")
    assert ts.read_bytes() == first
    check = _tool(tmp_path, "check")
    assert check.returncode == 1 and "Brand new" in check.stdout and "Open" not in check.stdout
