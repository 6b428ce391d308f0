"""`make zip`: one valid top folder with the plugin, scoring/, resources/, translations."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import make_zip  # noqa: E402


def test_zip_is_valid_and_self_contained(tmp_path):
    out = make_zip.build(tmp_path / "spatialgap.zip")
    assert make_zip.validate(out) == []
    names = set(zipfile.ZipFile(out).namelist())
    for required in (
        "spatialgap/__init__.py",
        "spatialgap/metadata.txt",
        "spatialgap/LICENSE",
        "spatialgap/scoring/paths.py",
        "spatialgap/scoring/constraints/explain.py",
        "spatialgap/resources/prompts/edit-geojson.j2",
        "spatialgap/i18n/spatialgap_fr.qm",
        "spatialgap/resources/icons/spatialgap.svg",
    ):
        assert required in names, required
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert "spatialgap/scoring/formats/benchmark.py" in names  # a product module, despite its name
    # Benchmarking, performance and test scaffolding stays in the checkout.
    scaffolding = [
        n
        for n in names
        if "/tests/" in n or n.rsplit("/", 1)[-1] in ("bench.py", "fakeserver.py") or "perf" in n
    ]
    assert scaffolding == []
    # Same bytes twice: reproducible.
    again = make_zip.build(tmp_path / "again.zip")
    assert again.read_bytes() == out.read_bytes()
    # Installed as a QGIS plugin folder, its own scoring/ and resources/ are the ones used.
    plugins = tmp_path / "plugins"
    zipfile.ZipFile(out).extractall(plugins)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import spatialgap.install.paths as sp; "
        "sp.expose_scoring(); "
        "import scoring, scoring.paths, scoring.runner.prompts as p; "
        "print(scoring.__file__); print(scoring.paths.RESOURCES_DIR); print(p.PROMPTS_DIR.is_dir())"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(plugins)], capture_output=True, text=True, cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    scoring_file, resources, prompts_ok = r.stdout.split()
    assert scoring_file.startswith(str(plugins / "spatialgap" / "scoring"))
    assert resources == str(plugins / "spatialgap" / "resources") and prompts_ok == "True"


def test_validator_rejects_a_bad_archive(tmp_path):
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("spatial-gap/__init__.py", "")
        zf.writestr("spatial-gap/metadata.txt", "[general]\nname=x\nversion=one\n")
        zf.writestr("spatial-gap/scoring/render/bench.py", "")
    errors = make_zip.validate(bad)
    assert any("identifier" in e for e in errors) and any("version" in e for e in errors)
    assert any("LICENSE" in e for e in errors) and any("missing email" in e for e in errors)
    assert any("forbidden member spatial-gap/scoring/render/bench.py" in e for e in errors)
