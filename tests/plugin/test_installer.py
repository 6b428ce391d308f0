"""The Install dependencies dialog: a real pip (QGIS's Python's own) into a private directory."""

from __future__ import annotations

import platform
import subprocess
import sys
import zipfile
from pathlib import Path

from plugin.install import deps
from plugin.install.installer import (
    InstallDialog,
    expose_private_dir,
    installable,
    pip_arguments,
    private_dir,
)
from tests.plugin.conftest import wait_for

PIP_BOUND_S = 120.0
ROOT = Path(__file__).resolve().parents[2]


def _wheel(folder, name: str = "sgdummy", ver: str = "1.0"):
    """A minimal pure-Python wheel, so pip runs for real without the network."""
    path = folder / f"{name}-{ver}-py3-none-any.whl"
    info = f"{name}-{ver}.dist-info"
    with zipfile.ZipFile(path, "w") as whl:
        whl.writestr(f"{name}/__init__.py", "VALUE = 42\n")
        whl.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\n")
        whl.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        whl.writestr(f"{info}/RECORD", "")
    return path


def test_pip_never_installs_pyproj_or_numpy_and_only_into_the_private_dir(tmp_path):
    missing = [deps.REQUIRED[0], ("pyproj", "pyproj", "python3-pyproj"), ("numpy", "numpy", "python3-numpy")]
    reqs, left = installable(missing, geos=(3, 11))
    # QGIS's GEOS 3.11 (Debian 12) is what a shapely wheel runs on inside QGIS: 2.1 needs 3.12.
    assert reqs == ["shapely>=2.0,<2.1"] and set(left) == {"pyproj", "numpy"}
    assert installable(missing, geos=(3, 12))[0] == ["shapely>=2.0"]
    target = private_dir(str(tmp_path))
    assert target.is_relative_to(tmp_path) and f"py{sys.version_info.major}" in target.name
    args = pip_arguments(target, reqs)
    assert args[:3] == ["-m", "pip", "install"] and args[args.index("--target") + 1] == str(target)
    assert "--no-deps" in args and "--only-binary=:all:" in args and "--user" not in args
    assert expose_private_dir(str(tmp_path)) is None  # nothing installed yet: sys.path unchanged
    target.mkdir(parents=True)
    try:
        # Last on the path: never before what QGIS or another plugin ships (tests/plugin/test_sys_path.py).
        assert expose_private_dir(str(tmp_path)) == target and sys.path[-1] == str(target)
    finally:
        sys.path.remove(str(target))
    hint = deps.install_hint(missing)
    if platform.system() == "Linux":
        assert "--user" not in hint and "Install dependencies" in hint and "pyproj" in hint


def test_dialog_installs_a_wheel_with_pip_and_says_restart(qgis_app, tmp_path, monkeypatch):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels)
    monkeypatch.setattr("plugin.install.installer.private_dir", lambda settings_dir=None: tmp_path / "libs")
    missing = [("sgdummy", "sgdummy>=1.0", "python3-sgdummy"), ("pyproj", "pyproj", "python3-pyproj")]
    dialog = InstallDialog(missing, pip_extra=("--no-index", "--find-links", str(wheels)))
    assert dialog.table.rowCount() == 2 and dialog.install_btn.isEnabled()
    assert "pyproj" in dialog.notes.text()
    dialog.install()
    wait_for(lambda: dialog.succeeded is not None, PIP_BOUND_S)
    assert dialog.succeeded, dialog.output.toPlainText()
    assert (tmp_path / "libs" / "sgdummy" / "__init__.py").is_file()
    assert not (tmp_path / "libs" / "pyproj").exists()
    assert "Restart QGIS" in dialog.status.text()
    # The table no longer says "missing" for what was just installed.
    assert dialog.table.item(0, 2).text().startswith("1.")
    assert dialog.table.item(1, 2).text() != dialog.table.item(0, 2).text()  # pyproj: not installed here
    sys.path[:] = [p for p in sys.path if p != str(tmp_path / "libs")]


def test_dialog_shows_pips_output_on_failure(qgis_app, tmp_path, monkeypatch):
    monkeypatch.setattr("plugin.install.installer.private_dir", lambda settings_dir=None: tmp_path / "libs")
    dialog = InstallDialog([("sgnothere", "sgnothere>=1", "python3-sgnothere")], pip_extra=("--no-index",))
    dialog.install()
    wait_for(lambda: dialog.succeeded is not None, PIP_BOUND_S)
    assert dialog.succeeded is False and dialog.install_btn.isEnabled()
    assert "sgnothere" in dialog.output.toPlainText() and "pip failed" in dialog.status.text()


HEADLESS_ONLY = ("aiohttp", "httpx", "tqdm")  # QGIS's network stack and QgsTask progress replace them


def test_plugin_and_its_runs_load_without_aiohttp_or_tqdm():
    blocked = "; ".join(f"sys.modules[{m!r}] = None" for m in HEADLESS_ONLY)
    code = (
        f"import sys; {blocked}; "
        "import plugin.main, plugin.algorithms.provider, scoring.runner.run, scoring.score.results"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
