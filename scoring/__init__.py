"""Spatial Gap scoring package: OSM extract -> feature pools -> scenes + oracle answers ->
instances -> rendered maps -> model runs -> predictions -> scores -> reports.

Importable and fully usable without QGIS.
"""

import warnings

__version__ = "0.1.0"

# Debian's python3-matplotlib (pulled in by python3-qgis) registers its own mpl_toolkits namespace
# through a .pth file; the pinned pip matplotlib then cannot load the 3D axes and warns on import.
# Nothing here draws in 3D, and the warning would be the first line a user sees.
warnings.filterwarnings("ignore", message="Unable to import Axes3D", category=UserWarning)
