"""How the plugin reaches its own code and its private libraries without changing what any
other plugin imports (no scoring import: this runs before scoring can be imported).

- scoring: the package keeps its absolute imports (`from scoring.x import ...`) and its name, so
  it cannot become `spatialgap.scoring`. Instead of putting the plugin folder on sys.path (which
  would also expose `resources`, `i18n`... and let an unrelated `scoring` earlier on the path
  shadow ours), one meta-path finder answers for the top-level name `scoring` only, from the
  plugin folder; its submodules then resolve through the package's own __path__. Inside QGIS the
  plugin never starts a worker process (every stage runs with jobs=1: sys.executable is the QGIS
  binary there, so a spawned child could not run anyway), so no child needs to find it.
- private libraries (what Install dependencies… put in the profile): appended at the END of
  sys.path, so a module QGIS or another plugin ships always wins. The one exception is a
  distribution whose own copy is unusable (shapely 1.8 on Debian 12 / Ubuntu 22.04): the
  installer installed it because of that, and a finder answers for that name from the private
  directory, as long as no one has imported the old one yet.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from importlib import metadata
from pathlib import Path

PLUGIN_DIR = Path(__file__).resolve().parents[1]
# Modules whose distribution copy may be too old to use (module -> minimum major version).
MIN_MAJOR = {"shapely": 2}


class OwnTopLevel(importlib.abc.MetaPathFinder):
    """Finds the top-level modules ``names`` in ``folder`` only (and nothing else)."""

    def __init__(self, folder: Path, names: set[str]) -> None:
        self.folder = str(folder)
        self.names = set(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.names:
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [self.folder])

    def __repr__(self) -> str:
        return f"OwnTopLevel({self.folder!r}, {sorted(self.names)})"


def _finders() -> list[OwnTopLevel]:
    return [f for f in sys.meta_path if isinstance(f, OwnTopLevel)]


def install_finder(folder: Path, names: set[str]) -> OwnTopLevel:
    """One finder per folder, first on sys.meta_path (idempotent: a reload finds the old one)."""
    for finder in _finders():
        if finder.folder == str(folder):
            finder.names |= names
            return finder
    finder = OwnTopLevel(folder, names)
    sys.meta_path.insert(0, finder)
    return finder


def remove_finders() -> None:
    """Unloading the plugin leaves sys.meta_path as it found it."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, OwnTopLevel)]


def expose_scoring(plugin_dir: Path = PLUGIN_DIR) -> bool:
    """In the installed zip, scoring/ sits inside the plugin folder: make `import scoring` find
    that copy (a checkout's venv has it installed already; then nothing is done)."""
    if not (plugin_dir / "scoring" / "__init__.py").is_file():
        return False
    install_finder(plugin_dir, {"scoring"})
    return True


def _major(folder: str | None, module: str) -> int | None:
    """The major version of ``module``'s distribution in ``folder`` (None: not there)."""
    if folder is None:
        return None
    for dist in metadata.distributions(path=[folder]):
        if (dist.metadata["Name"] or "").lower() == module:
            try:
                return int(dist.version.split(".")[0])
            except ValueError:
                return None
    return None


def usable_elsewhere(module: str, private: Path) -> bool:
    """Whether ``module`` imports from somewhere other than ``private`` in a usable version."""
    paths = [p for p in sys.path if Path(p or ".").resolve() != private.resolve()]
    spec = importlib.machinery.PathFinder.find_spec(module, paths)
    if spec is None or spec.origin is None:
        return False
    minimum = MIN_MAJOR.get(module)
    if minimum is None:
        return True
    site = str(Path(spec.origin).parent.parent)
    major = _major(site, module)
    return major is None or major >= minimum


def expose_private(target: Path) -> list[str]:
    """Append ``target`` to sys.path; route to it only the modules whose other copy is too old.
    Returns those routed names."""
    if str(target) not in sys.path:
        sys.path.append(str(target))
    routed = [
        mod
        for mod in MIN_MAJOR
        if mod not in sys.modules and (target / mod).is_dir() and not usable_elsewhere(mod, target)
    ]
    if routed:
        install_finder(target, set(routed))
    return routed
