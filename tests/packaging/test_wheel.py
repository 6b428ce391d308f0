"""The built wheel is a working headless tool on its own: every resource ships inside it, it finds
them with no checkout around it, it records its commit, and its requirements are bounded. (The
clean venv without QGIS or GDAL, with dependencies from the index, is .ci/clean_venv.sh.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    (whl,) = out.glob("spatialgap-*.whl")
    return whl


@pytest.fixture(scope="module")
def unpacked(wheel, tmp_path_factory) -> Path:
    """The wheel's files as an install puts them in site-packages (no checkout around them)."""
    site = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    return site


def _tracked(folder: str) -> list[str]:
    r = subprocess.run(["git", "ls-files", folder], cwd=REPO, capture_output=True, text=True, check=True)
    return [line for line in r.stdout.splitlines() if line]


def test_every_resource_and_module_is_in_the_wheel(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    resources = _tracked("resources")
    assert len(resources) > 30
    missing = [f for f in resources if "scoring/" + f not in names]
    assert not missing, missing[:5]
    modules = [f for f in _tracked("scoring") if f.endswith((".py", ".yaml"))]  # lm-eval task files
    assert [f for f in modules if f not in names] == []  # scoring/extract has no __init__.py
    assert not [n for n in names if "__pycache__" in n or n.startswith(("tests/", "plugin/"))]
    assert {"scoring/py.typed", "spatialgap/inspect_tasks.py"} <= names  # typed; inspect_ai's names


def test_the_wheel_records_its_commit_and_bounded_requirements(wheel):
    z = zipfile.ZipFile(wheel)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    assert z.read("scoring/COMMIT").decode().strip() == head
    (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
    msg = Parser().parsestr(z.read(meta).decode())
    extras = set(msg.get_all("Provides-Extra"))
    assert {"gdal", "export", "dask"} <= extras
    core = [r for r in msg.get_all("Requires-Dist") if "extra ==" not in r]
    for req in core:  # a lower and an upper bound: what the suite and the clean venv test
        assert ">=" in req and "<" in req.replace("<=", ""), req
    assert any(r.startswith("matplotlib") for r in core) and any(r.startswith("pyogrio") for r in core)


def _run(site: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    # -c with site first on sys.path: the unpacked wheel shadows the checkout's editable install
    code = (
        f"import sys; sys.path.insert(0, {str(site)!r}); "
        f"from scoring.cli import main; sys.exit(main({list(args)!r}))"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=site, timeout=300, **kw
    )


def test_the_installed_package_finds_its_resources_without_a_checkout(unpacked):
    code = (
        f"import sys; sys.path.insert(0, {str(unpacked)!r}); import scoring, scoring.paths as p; "
        "print(scoring.__file__); print(p.RESOURCES_DIR); print(scoring.version_info()['commit'])"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=unpacked, timeout=60)
    module, resources, commit = r.stdout.split()
    assert module == str(unpacked / "scoring" / "__init__.py")
    assert resources == str(unpacked / "scoring" / "resources")
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    r = _run(unpacked, "selfcheck")
    assert r.returncode == 0 and "selfcheck passed" in r.stdout, r.stderr
    r = _run(unpacked, "--version")
    assert r.stdout.strip() == f"spatialgap 0.1.0 (commit {commit})"


def test_without_a_reader_build_names_pyogrio_in_one_line(unpacked, tmp_path):
    code = (
        f"import sys; sys.path.insert(0, {str(unpacked)!r}); sys.modules['osgeo'] = None; "
        "sys.modules['pyogrio'] = None; "
        "from scoring.cli import main; "
        f"sys.exit(main(['build', '--osm', {str(tmp_path / 'x.osm.pbf')!r}, "
        f"'--out', {str(tmp_path / 'b')!r}]))"
    )
    (tmp_path / "x.osm.pbf").write_bytes(b"\0" * 64)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install pyogrio" in lines[0], r.stderr
    assert not (tmp_path / "b").exists()


def test_a_wheel_inside_another_repository_records_its_own_commit(unpacked, tmp_path):
    # a researcher's venv inside their own project: its commit is not the package's
    project = tmp_path / "project"
    shutil.copytree(unpacked, project / "venv" / "site")
    git = ["git", "-c", "user.name=r", "-c", "user.email=r@example.org"]
    subprocess.run([*git, "init", "-q", str(project)], check=True)
    (project / "notes.txt").write_text("mine\n")
    subprocess.run([*git, "-C", str(project), "add", "notes.txt"], check=True)
    subprocess.run([*git, "-C", str(project), "commit", "-qm", "mine"], check=True)
    theirs = subprocess.run(
        ["git", "-C", str(project), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    site = project / "venv" / "site"
    code = (
        f"import sys; sys.path.insert(0, {str(site)!r}); "
        "from scoring.runner.provenance import git_commit; print(git_commit())"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=project, timeout=60)
    recorded = (site / "scoring" / "COMMIT").read_text().strip()
    assert r.stdout.strip() == recorded != theirs, r.stderr
