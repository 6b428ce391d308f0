"""Map style (resources/styles/map.json), pinned matplotlib settings and the bundled fonts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg", force=True)  # explicit: never pick an interactive backend

import warnings

with warnings.catch_warnings():
    # Debian's python3-matplotlib leaves an mpl_toolkits beside the pinned wheel: its Axes3D
    # import warning is irrelevant here (no 3-D axes).
    warnings.filterwarnings("ignore", message="Unable to import Axes3D")
    import matplotlib.projections

import matplotlib.style.core as _style_core
from matplotlib.font_manager import FontProperties

from scoring.paths import RESOURCES_DIR

STYLE_PATH = RESOURCES_DIR / "styles" / "map.json"
DPI = 96  # 1536 px / 96 dpi = 16 in exactly; 1 pt = 4/3 px
PT_PER_PX = 72.0 / DPI

# Every rcParam the renderer relies on, applied on top of matplotlib's built-in defaults
# (rcdefaults, so a user's matplotlibrc cannot change the pixels).
PINNED_RC: dict[str, Any] = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "path.simplify": True,
    "path.simplify_threshold": 1.0 / 9.0,
    "path.snap": True,
    "agg.path.chunksize": 0,
    "lines.antialiased": True,
    "patch.antialiased": True,
    "text.antialiased": True,
    "text.hinting": "force_autohint",
    "text.hinting_factor": 8,
    "text.kerning_factor": 0,
    "text.usetex": False,
    "font.family": "DejaVu Sans",
    "axes.unicode_minus": True,
    "image.resample": False,
    "svg.hashsalt": "spatialgap",
}

_FONT_DIR = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
FONT_REGULAR = _FONT_DIR / "DejaVuSans.ttf"
FONT_BOLD = _FONT_DIR / "DejaVuSans-Bold.ttf"


def font(size_pt: float, bold: bool = False) -> FontProperties:
    """The DejaVu Sans shipped inside matplotlib (never a system copy), by file name."""
    return FontProperties(fname=str(FONT_BOLD if bold else FONT_REGULAR), size=size_pt)


@lru_cache(maxsize=4)
def _load(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def load_style(path: str | Path | None = None) -> dict[str, Any]:
    """A fresh copy of the style dictionary."""
    return json.loads(_load(str(path or STYLE_PATH)))


_PINNED_PARAMS: dict[str, Any] = {}


def pinned_rc_params() -> None:
    """matplotlib.rcdefaults() then rcParams.update(PINNED_RC), as one dict update: the
    validated values are computed once per process (validating ~300 of them is 5 ms a map)."""
    rc = matplotlib.rcParams
    if not _PINNED_PARAMS:
        with matplotlib.rc_context():
            matplotlib.rcdefaults()
            rc.update(PINNED_RC)
            # rcdefaults leaves the style blacklist (backend, interactive...) as it finds it
            blacklist = _style_core.STYLE_BLACKLIST  # type: ignore[attr-defined]
            snapshot = {k: v for k, v in dict(rc.copy()).items() if k not in blacklist}
        _PINNED_PARAMS.update(snapshot)
    dict.update(rc, _PINNED_PARAMS)  # type: ignore[arg-type]  # as rc_context restores them


@contextmanager
def pinned_rc_context() -> Iterator[None]:
    """matplotlib.rc_context() with pinned_rc_params() inside: the same values restored on exit
    (all but the backend, as rc_context does), copied straight from the dict's storage
    (RcParams.copy() reads every parameter through Python)."""
    rc = matplotlib.rcParams
    saved = dict(dict.items(rc))
    saved.pop("backend", None)
    try:
        pinned_rc_params()
        yield
    finally:
        dict.update(rc, saved)  # type: ignore[arg-type]


def px_to_pt(px: float) -> float:
    return px * PT_PER_PX
