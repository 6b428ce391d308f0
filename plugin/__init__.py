"""QGIS plugin entry point (GUI only; all geometry logic lives in the `scoring` package)."""

import sys
from pathlib import Path


def _expose_scoring() -> None:
    # In the installed zip, scoring/ sits inside the plugin folder: make it importable (first,
    # so that an unrelated `scoring` module elsewhere cannot shadow it).
    here = Path(__file__).resolve().parent
    if (here / "scoring").is_dir() and str(here) not in sys.path:
        sys.path.insert(0, str(here))


def classFactory(iface):  # noqa: N802 - QGIS's required name
    _expose_scoring()
    from .install.installer import expose_private_dir

    expose_private_dir()  # what the Install dependencies dialog installed, before scoring loads
    from .install.deps import missing_dependencies

    missing = missing_dependencies()
    if missing:
        from .install.missing import MissingDependenciesPlugin

        return MissingDependenciesPlugin(iface, missing)
    from .main import SpatialGapPlugin

    return SpatialGapPlugin(iface)
