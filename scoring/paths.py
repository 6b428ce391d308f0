"""Where the project's resources live (templates, schemas, styles) without QGIS.

`resources/` sits beside `scoring/` both in a checkout and inside the plugin zip.
"""

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
RESOURCES_DIR = PACKAGE_DIR.parent / "resources"
