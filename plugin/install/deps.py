"""Which Python packages the scoring package needs that QGIS's Python lacks (no scoring import)."""

from __future__ import annotations

import importlib.util
import platform
from importlib import metadata
from pathlib import Path

# (import name, pip requirement, Debian package). Not aiohttp or tqdm: inside QGIS the runner goes
# through QGIS's network stack and reports progress through QgsTask.
REQUIRED = (
    ("shapely", "shapely>=2.0", "python3-shapely"),
    ("pyproj", "pyproj", "python3-pyproj"),
    ("numpy", "numpy", "python3-numpy"),
    ("jinja2", "jinja2", "python3-jinja2"),
    ("matplotlib", "matplotlib", "python3-matplotlib"),
    ("scipy", "scipy", "python3-scipy"),
    ("PIL", "pillow", "python3-pil"),
)


def _shapely_too_old() -> bool:
    """Whether the shapely that `import shapely` would load (the private one when routed to it,
    see install.paths) is older than 2."""
    spec = importlib.util.find_spec("shapely")
    try:
        if spec is not None and spec.origin:
            site = str(Path(spec.origin).parent.parent)
            for dist in metadata.distributions(path=[site]):
                if (dist.metadata["Name"] or "").lower() == "shapely":
                    return int(dist.version.split(".")[0]) < 2
        return int(metadata.version("shapely").split(".")[0]) < 2
    except Exception:  # metadata missing: trust the import
        return False


def missing_dependencies() -> list[tuple[str, str, str]]:
    """The (module, pip requirement, Debian package) entries that cannot be imported."""
    out = []
    for mod, pip_req, deb in REQUIRED:
        if importlib.util.find_spec(mod) is None or (mod == "shapely" and _shapely_too_old()):
            out.append((mod, pip_req, deb))
    return out


def install_hint(missing: list[tuple[str, str, str]]) -> str:
    """Commands that install what is missing by hand, for this platform (the Install
    dependencies dialog does it for the pip-installable ones)."""
    # A pip wheel of pyproj bundles its own PROJ; two PROJ builds in the QGIS process abort it,
    # so pyproj must come from the same distribution as QGIS.
    pip_reqs = " ".join(f'"{p}"' if ">" in p else p for m, p, _ in missing if m not in ("pyproj", "numpy"))
    proj_note = (
        "\npyproj: install your distribution's package (the pip wheel's own PROJ clashes with QGIS's)"
        if any(m == "pyproj" for m, _, _ in missing)
        else ""
    )
    if platform.system() == "Linux":
        # Not python3-shapely: Debian 12 / Ubuntu 22.04 ship 1.8, which is too old.
        debs = " ".join(d for m, _, d in missing if m != "shapely")
        old = (
            "shapely 2: Spatial Gap ▸ Install dependencies… (the distributions' shapely 1.8 is too old)"
            if any(m == "shapely" for m, _, _ in missing)
            else ""
        )
        lines = ([f"sudo apt install {debs}"] if debs else []) + ([old] if old else [])
        return "\n".join(lines) + proj_note
    if platform.system() == "Windows":
        return f"In the OSGeo4W Shell: python -m pip install {pip_reqs}{proj_note}"
    # macOS: the QGIS.app bundle's own Python.
    return f"/Applications/QGIS.app/Contents/MacOS/bin/python3 -m pip install --user {pip_reqs}{proj_note}"
