"""Data flows one way through the stages: importing a stage loads no module of a later stage, and
the scorer and the runner load no matplotlib. Each check imports in a fresh interpreter, since
this test process has long loaded everything."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# In the order data flows; modules shared by every stage (errors, files, paths, vocab, benchmark)
# belong to none.
STAGES: list[tuple[str, tuple[str, ...]]] = [
    (
        "extract",
        (
            "scoring.geometry.georef",
            "scoring.extract.pools",
            "scoring.extract.water",
            "scoring.extract.osm",
            "scoring.extract.vector",
        ),
    ),
    (
        "build",
        (
            "scoring.geometry.scene",
            "scoring.oracle",
            "scoring.constraints.facts",
            "scoring.constraints.edits",
            "scoring.relations",
            "scoring.build.builder",
        ),
    ),
    # the package loads its drawing modules lazily: import them by name
    ("render", ("scoring.render", "scoring.render.batch", "scoring.render.multi", "scoring.render.cli")),
    ("runner", ("scoring.runner", "scoring.runner.agents")),
    ("score", ("scoring.answers", "scoring.score", "scoring.frieda")),
]


def _loaded_after_import(modules: tuple[str, ...]) -> list[str]:
    """Names of every module loaded by importing `modules` in a fresh interpreter."""
    code = (
        "import importlib, json, sys\n"
        f"for m in {list(modules)!r}:\n"
        "    importlib.import_module(m)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def _in(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("position", range(len(STAGES)), ids=[s for s, _ in STAGES])
def test_a_stage_imports_no_later_stage(position):
    stage, modules = STAGES[position]
    later = tuple(m for _, ms in STAGES[position + 1 :] for m in ms)
    # a later stage's module that is a sub-package of this stage's (scoring.runner.agents) is ours
    later = tuple(m for m in later if not _in(m, modules))
    loaded = _loaded_after_import(modules)
    assert [m for m in loaded if _in(m, modules)], f"{stage}: its own modules were not loaded"
    leaks = [m for m in loaded if _in(m, later)]
    assert leaks == [], f"importing the {stage} stage loads later stages: {leaks}"


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
