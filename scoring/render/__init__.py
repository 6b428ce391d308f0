"""Map modality: annotated, georeferenced PNG maps of benchmark instances (matplotlib, no QGIS).

The transforms a map records live in scoring.geometry.georef (PixelTransform), which needs no matplotlib.
The drawing functions load on first use: the builder's context index and the sweep's renderer
version need no matplotlib (half a CPU-second to import, in every process that never draws).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from scoring.render.version import RENDERER_VERSION, SIDECAR_SCHEMA

if TYPE_CHECKING:
    from scoring.render.batch import load_render_inputs, render_benchmark
    from scoring.render.context import ContextIndex
    from scoring.render.renderer import render_instance, render_map

_LAZY = {
    "load_render_inputs": "scoring.render.batch",
    "render_benchmark": "scoring.render.batch",
    "ContextIndex": "scoring.render.context",
    "render_instance": "scoring.render.renderer",
    "render_map": "scoring.render.renderer",
}

__all__ = [
    "RENDERER_VERSION",
    "SIDECAR_SCHEMA",
    "ContextIndex",
    "render_instance",
    "render_map",
    "render_benchmark",
    "load_render_inputs",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scoring.render' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
