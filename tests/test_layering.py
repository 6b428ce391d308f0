"""Data flows one way through the stages: importing a module of one folder of `scoring/` loads no
module of a later folder (`scoring.LAYERS`), and the scorer and the runner load no matplotlib.
The stages are the folders themselves: a new module can only be placed in one, never forgotten.
Each check imports in a fresh interpreter, since this test process has long loaded everything."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import scoring

PACKAGE = Path(scoring.__file__).resolve().parent
README = PACKAGE.parent / "README.md"


def _modules_of(folder: str) -> list[str]:
    """Every module below scoring/<folder>, as dotted names."""
    out = []
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out.append(".".join(parts))
    return out


def _loaded_after_import(modules: list[str] | tuple[str, ...]) -> list[str]:
    """Names of every module loaded by importing `modules` in a fresh interpreter."""
    code = (
        "import importlib, json, sys\n"
        f"for m in {list(modules)!r}:\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except ModuleNotFoundError as exc:\n"
        "        # an optional framework (the adapters' inspect_ai, lm-eval) absent from this venv\n"
        "        if (exc.name or '').split('.')[0] == 'scoring':\n"
        "            raise\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def _in(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_every_folder_is_a_layer_and_the_top_level_holds_only_shared_words():
    folders = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert sorted(scoring.LAYERS) == folders
    stray = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in scoring.TOP_LEVEL)
    assert stray == [], f"place these modules in the folder of their stage: {stray}"
    # a folder without __init__.py would escape the check above
    bare = [p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert sorted(bare) == folders


@pytest.mark.parametrize("position", range(len(scoring.LAYERS)), ids=list(scoring.LAYERS))
def test_a_stage_imports_no_later_stage(position):
    folder = scoring.LAYERS[position]
    modules = _modules_of(folder)
    later = tuple(f"scoring.{f}" for f in scoring.LAYERS[position + 1 :])
    loaded = _loaded_after_import(modules)
    assert f"scoring.{folder}" in loaded, f"{folder}: its own modules were not loaded"
    leaks = [m for m in loaded if _in(m, later)]
    assert leaks == [], f"importing scoring/{folder} loads later stages: {leaks}"


def test_the_readme_pipeline_table_lists_the_folders_in_order():
    text = README.read_text(encoding="utf-8")
    section = text.split("## Pipeline", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `scoring/(\w+)/` \|", section, flags=re.M)
    assert listed == list(scoring.LAYERS)


def test_scorer_runner_and_georeferencing_load_no_matplotlib():
    loaded = _loaded_after_import(
        (
            "scoring.score",
            "scoring.runner",
            "scoring.runner.agents",
            "scoring.answers",
            "scoring.geometry.georef",
        )
    )
    heavy = [m for m in loaded if _in(m, ("matplotlib", "scoring.render", "qgis"))]
    assert heavy == []
    # the check can see matplotlib: the renderer does load it
    assert any(_in(m, ("matplotlib",)) for m in _loaded_after_import(("scoring.render.renderer",)))
