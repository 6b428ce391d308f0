"""The QGIS plugin calls scoring.render for its exports: a map rendered inside a running QGIS
process (qgis.core imported first, a QgsApplication initialised) must be byte-identical to the
headless one."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("qgis.core", reason="PyQGIS is not installed")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

# Runs in a fresh interpreter so that QGIS is imported before anything of ours, as in the plugin.
SCRIPT = r"""
import json, sys
from pathlib import Path
from qgis.core import QgsApplication
QgsApplication.setPrefixPath("/usr", True)
app = QgsApplication([], False)
app.initQgis()
import matplotlib
from scoring.render import ContextIndex, render_instance
bench, out, ids = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
ctx = ContextIndex.from_file(bench / "context.geojsonl", 32635)
insts = {}
for name in ("qa.jsonl", "edit.jsonl"):
    for line in (bench / name).read_text(encoding="utf-8").splitlines():
        inst = json.loads(line)
        insts[inst["id"]] = inst
for iid in ids:
    render_instance(insts[iid], ctx, out)
print(json.dumps({"backend": matplotlib.get_backend(),
                  "qgis_loaded": "qgis.core" in sys.modules}))
"""


def test_render_inside_a_qgis_process_matches_headless_bytes(bench, tmp_path):
    ids = ["helsinki-qa-O06-002", "helsinki-qa-M12-004", "helsinki-edit-D02-005"]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(REPO))
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(bench), str(tmp_path), *ids],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=str(tmp_path),
    )
    assert r.returncode == 0, r.stderr[-2000:]
    info = json.loads(r.stdout.strip().splitlines()[-1])
    assert info["qgis_loaded"] and info["backend"].lower() == "agg"
    for iid in ids:
        for ext in (".png", ".json", ".pgw", ".png.aux.xml"):
            inside = (tmp_path / f"{iid}{ext}").read_bytes()
            headless = (bench / "maps" / f"{iid}{ext}").read_bytes()
            assert inside == headless, (iid, ext)
