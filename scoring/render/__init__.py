"""Map modality: annotated, georeferenced PNG maps of benchmark instances (matplotlib, no QGIS).

The transforms a map records live in scoring.georef (PixelTransform), which needs no matplotlib.
"""

from scoring.render.batch import load_render_inputs, render_benchmark
from scoring.render.context import ContextIndex
from scoring.render.renderer import render_instance, render_map
from scoring.render.version import RENDERER_VERSION, SIDECAR_SCHEMA

__all__ = [
    "RENDERER_VERSION",
    "SIDECAR_SCHEMA",
    "ContextIndex",
    "render_instance",
    "render_map",
    "render_benchmark",
    "load_render_inputs",
]
