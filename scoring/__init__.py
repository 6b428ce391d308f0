"""Spatial Gap scoring package: OSM extract -> feature pools -> scenes + oracle answers ->
instances -> rendered maps -> model runs -> predictions -> scores -> reports.

Importable and fully usable without QGIS. The public API is ``__all__`` (docs/api.md); every
other module is internal and may change. The names load on first use, so ``import scoring``
stays cheap (``spatialgap serve-agent`` must not load GDAL or matplotlib).

>>> import scoring
>>> scoring.__version__ == scoring.version_info()["version"]
True
>>> inst = scoring.fixture_instances()["helsinki-qa-M01-000"]  # a real instance (selfcheck)
>>> [m["role"] for m in scoring.build_messages(inst, scoring.Modality.GEOJSON, "open", None)]
['system', 'user']
>>> v = scoring.score_qa(inst, "Answer: 67.97", form="open")
>>> str(v.verdict), v.reason  # a Verdict: its string
('correct', 'within tolerance')
>>> scoring.score_qa(inst, "Answer: 90", form="open").verdict is scoring.Verdict.WRONG
True
"""

from __future__ import annotations

import importlib
import subprocess
import warnings
from pathlib import Path
from typing import Any

__version__ = "0.1.0"  # the one place: pyproject.toml reads it (tool.setuptools.dynamic)

# The package's folders in the order data flows: importing a module of one folder loads no module
# of a later one (tests/test_layering.py checks it, and that every folder is listed here). The
# first four are shared by every stage; the README's pipeline table lists the same folders.
LAYERS: tuple[str, ...] = (
    "support",  # JSON files and the one atomic writer, memo caches, process start-up
    "execute",  # shards of pure work on local processes or a Dask cluster
    "formats",  # on-disk formats and their typed records, shared by the stages that write and read them
    "geometry",  # city CRS and georeferencing, scenes, pole of inaccessibility
    "extract",  # OSM extract -> feature pools
    "oracle",  # measures by family: the geometric truth
    "constraints",  # facts, their wording, the edit executor, explanations, map framing
    "answers",  # answer formats and the one reply reader (the catalogue checks with it)
    "relations",  # the catalogue of relations, the protocols, the relation reference
    "build",  # pools -> scenes + oracle answers -> instances
    "render",  # instances -> annotated maps
    "runner",  # instances -> model runs -> predictions
    "score",  # predictions -> verdicts -> tables and reports
    "frieda",  # FRIEDA-style free-form map answers
    "export",  # a benchmark as a Hugging Face dataset, Parquet or JSONL
    "browse",  # the per-sample browser beside a report
    "evaluate",  # the main job: all of the above end to end
    "adapters",  # inspect_ai and lm-eval tasks over the above (optional frameworks)
)
# Modules allowed at the top level: the shared words and the command entry point.
TOP_LEVEL: tuple[str, ...] = ("__init__", "__main__", "cli", "errors", "paths", "vocab")

# Debian's python3-matplotlib (pulled in by python3-qgis) registers its own mpl_toolkits namespace
# through a .pth file; the pinned pip matplotlib then cannot load the 3D axes and warns on import.
# Nothing here draws in 3D, and the warning would be the first line a user sees.
warnings.filterwarnings("ignore", message="Unable to import Axes3D", category=UserWarning)

# public name -> the module defining it (loaded on first access, PEP 562)
_PUBLIC: dict[str, str] = {
    "Benchmark": "scoring.formats.benchmark",
    "build_benchmark": "scoring.build.builder",
    "build_messages": "scoring.runner.prompts",
    "read_map_set": "scoring.formats.mapsets",
    "ModelSpec": "scoring.runner.config",
    "load_config": "scoring.runner.config",
    "run_benchmark": "scoring.runner.run",
    "score_qa": "scoring.score.verdicts",
    "score_edit": "scoring.score.verdicts",
    "score_prediction": "scoring.score.verdicts",
    "score_runs": "scoring.score.results",
    "load_results": "scoring.score.results",
    "write_report": "scoring.score.report",
    "export_benchmark": "scoring.export",
    "run_evaluation": "scoring.evaluate.api",
    "RunSummary": "scoring.runner.session",
    "Scored": "scoring.score.verdicts",
    "Summary": "scoring.score.records",
    "start_agent_server": "scoring.runner.agents.server",
    "SpatialGapError": "scoring.errors",
    "InputError": "scoring.errors",
    "Task": "scoring.vocab",
    "Modality": "scoring.vocab",
    "Form": "scoring.vocab",
    "Family": "scoring.vocab",
    "Verdict": "scoring.vocab",
}

__all__ = ["__version__", "version_info", "fixture_instances", *_PUBLIC]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'scoring' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def fixture_instances() -> dict[str, dict]:
    """The real instances of the selfcheck fixture by id (examples and smoke tests)."""
    from scoring.paths import RESOURCES_DIR
    from scoring.support.files import read_jsonl

    return {i["id"]: i for _, i in read_jsonl(RESOURCES_DIR / "selfcheck" / "instances.jsonl")}


def _commit() -> str:
    """The commit of the checkout around the package (an editable install: the package folder
    sits at the top of a git work tree holding pyproject.toml), else the one recorded in the
    wheel. A repository that merely contains the installed package (a venv inside a project)
    is not ours: its top level is not the package's parent."""
    here = Path(__file__).resolve().parent
    try:
        r = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", "HEAD"],
            cwd=here.parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
        lines = r.stdout.split()
        if (
            r.returncode == 0
            and len(lines) == 2
            and Path(lines[0]).resolve() == here.parent
            and (here.parent / "pyproject.toml").is_file()
        ):
            return lines[1]
    except (OSError, subprocess.SubprocessError):
        pass
    recorded = here / "COMMIT"  # written by setup.py when the wheel is built
    return recorded.read_text().strip() if recorded.is_file() else "unknown"


def version_info() -> dict[str, str]:
    """``{"version", "commit"}`` of this installation (what ``spatialgap --version`` prints)."""
    return {"version": __version__, "commit": _commit()}
