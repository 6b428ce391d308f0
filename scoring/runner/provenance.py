"""What a run manifest records about the software that made it."""

from __future__ import annotations

import functools
import platform
import sys
from importlib import metadata

import scoring


@functools.cache
def git_commit() -> str | None:
    """The package's own commit (scoring.version_info: the checkout's for an editable install,
    the one baked into the wheel otherwise), never that of a repository the package or the
    working directory happens to sit in; None when unknown."""
    commit = scoring.version_info()["commit"]
    return None if commit == "unknown" else commit


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in ("aiohttp", "jinja2", "tqdm", "numpy", "shapely", "pyproj"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out
