"""Loading the plugin from its zip changes nothing another plugin imports (issue 31 item 7):
sys.path[0] stays, `processing` and `shapely` resolve where they did, an unrelated top-level
`scoring` earlier on the path neither shadows the plugin's copy nor is shadowed for others beyond
that one name, and the private library folder only adds what nothing else provides."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import make_zip  # noqa: E402

CHILD = textwrap.dedent(
    """
    import importlib, json, sys
    from pathlib import Path
    plugins, profile, decoy = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    sys.path.insert(0, decoy)        # another plugin's folder holding a module named scoring
    sys.path.insert(0, str(plugins))  # QGIS puts the plugins folder on the path
    from qgis.core import QgsApplication
    app = QgsApplication([], False)
    QgsApplication.setPrefixPath("/usr", True)
    QgsApplication.initQgis()
    sys.path.insert(0, "/usr/share/qgis/python/plugins")
    import processing, shapely
    before = {"path0": sys.path[0], "path": list(sys.path), "processing": processing.__file__,
              "shapely": shapely.__file__}
    import spatialgap
    import spatialgap.install.installer as inst
    inst.private_dir = lambda settings_dir=None: Path(profile)
    plugin = spatialgap.classFactory(None)
    import scoring, sgprivateonly
    for m in ("processing", "shapely"):
        sys.modules.pop(m, None)
    after_processing = importlib.import_module("processing").__file__
    after_shapely = importlib.import_module("shapely").__file__
    print(json.dumps({**before, "after_path0": sys.path[0], "after_path": list(sys.path),
        "after_processing": after_processing, "after_shapely": after_shapely,
        "scoring": scoring.__file__, "private": sgprivateonly.__file__,
        "plugin": type(plugin).__name__}))
    """
)


def test_loading_the_plugin_shadows_nothing(tmp_path):
    zip_path = make_zip.build(tmp_path / "spatialgap.zip")
    plugins = tmp_path / "plugins"
    zipfile.ZipFile(zip_path).extractall(plugins)
    # Another plugin's folder with a top-level `scoring`, earlier on sys.path than the plugins.
    decoy = tmp_path / "other-plugin"
    (decoy / "scoring").mkdir(parents=True)
    (decoy / "scoring" / "__init__.py").write_text("DECOY = True\n")
    # The private folder: a copy of a module the system has (shapely) and one only it has.
    private = tmp_path / "libs"
    (private / "shapely").mkdir(parents=True)
    (private / "shapely" / "__init__.py").write_text("raise ImportError('the private copy was used')\n")
    (private / "sgprivateonly").mkdir()
    (private / "sgprivateonly" / "__init__.py").write_text("")
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(plugins), str(private), str(decoy)],
        capture_output=True,
        text=True,
        timeout=180,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["plugin"] == "SpatialGapPlugin"
    assert seen["after_path0"] == seen["path0"]
    # Nothing inserted before what was there; the private folder only appended.
    assert seen["after_path"][: len(seen["path"])] == seen["path"]
    assert seen["after_path"][len(seen["path"]) :] == [str(private)]
    assert str(plugins / "spatialgap") not in seen["after_path"]
    assert seen["after_processing"] == seen["processing"]
    assert seen["after_shapely"] == seen["shapely"]  # the system's, not the private copy
    assert Path(seen["scoring"]).is_relative_to(plugins / "spatialgap")  # not the decoy
    assert Path(seen["private"]).is_relative_to(private)


def test_a_too_old_system_shapely_is_the_one_name_routed_to_the_private_copy(tmp_path):
    """Debian 12's shapely 1.8: the installer put 2.x in the private folder, and that name (only)
    resolves there; with a usable system shapely nothing is routed."""
    from plugin.install import paths

    system = tmp_path / "system"
    private = tmp_path / "libs"
    for site, version in ((system, "1.8.5"), (private, "2.0.7")):
        (site / "shapely").mkdir(parents=True)
        (site / "shapely" / "__init__.py").write_text(f"VERSION = {version!r}\n")
        info = site / f"shapely-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: shapely\nVersion: {version}\n")
    saved_path, saved_meta = list(sys.path), list(sys.meta_path)
    saved = {m: sys.modules.pop(m) for m in list(sys.modules) if m.partition(".")[0] == "shapely"}
    try:
        sys.path.insert(0, str(system))
        assert not paths.usable_elsewhere("shapely", private)
        assert paths.expose_private(private) == ["shapely"]
        import shapely

        assert shapely.VERSION == "2.0.7"
        assert sys.path[0] == str(system) and sys.path[-1] == str(private)
    finally:
        sys.path[:], sys.meta_path[:] = saved_path, saved_meta
        for m in [m for m in sys.modules if m.partition(".")[0] == "shapely"]:
            del sys.modules[m]
        sys.modules.update(saved)
    import shapely

    assert shapely.__version__.startswith("2.") and paths.usable_elsewhere("shapely", private)
