"""Spatial Gap scoring package: OSM extract -> feature pools -> scenes + oracle answers ->
instances -> rendered maps -> model runs -> predictions -> scores -> reports.

Importable and fully usable without QGIS.
"""

import warnings

__version__ = "0.1.0"

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
    "evaluate",  # the main job: all of the above end to end
)
# Modules allowed at the top level: the shared words and the command entry point.
TOP_LEVEL: tuple[str, ...] = ("__init__", "__main__", "cli", "errors", "paths", "vocab")

# Debian's python3-matplotlib (pulled in by python3-qgis) registers its own mpl_toolkits namespace
# through a .pth file; the pinned pip matplotlib then cannot load the 3D axes and warns on import.
# Nothing here draws in 3D, and the warning would be the first line a user sees.
warnings.filterwarnings("ignore", message="Unable to import Axes3D", category=UserWarning)
