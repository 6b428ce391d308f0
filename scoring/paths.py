"""Where the project's resources live (templates, schemas, styles, fixtures, mappings).

In a checkout and inside the plugin zip, ``resources/`` sits beside ``scoring/``; an installed
wheel carries the same folder as the package data of ``scoring.resources`` (setup.py maps it).
The checkout's copy wins, so an editable install reads the files being edited.
"""

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_MARKER = Path("prompts") / "_common.j2"  # a file every complete resources folder has


def _resources_dir() -> Path:
    for candidate in (PACKAGE_DIR.parent / "resources", PACKAGE_DIR / "resources"):
        if (candidate / _MARKER).is_file():
            return candidate
    return PACKAGE_DIR.parent / "resources"  # absent: each reader names the file it misses


RESOURCES_DIR = _resources_dir()
