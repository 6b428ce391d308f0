"""Map modality: annotated, georeferenced PNG maps of benchmark instances (matplotlib, no QGIS).

Public API:
    render_instance(instance, context_index, out_dir) -> {"png", "sidecar", "world", "aux": Path}
    render_map(instance, context_index) -> (png_bytes, sidecar_record)
    render_benchmark(bench_dir, jobs=None, progress=True, ids=None) -> RenderSummary
    ContextIndex.from_file(path, task_epsg)
    PixelTransform (scoring.render.transform): pixel <-> EPSG:3857 <-> task CRS
"""

from scoring.render.batch import load_benchmark, render_benchmark
from scoring.render.context import ContextIndex
from scoring.render.renderer import render_instance, render_map
from scoring.render.transform import PixelTransform
from scoring.render.version import RENDERER_VERSION, SIDECAR_SCHEMA

__all__ = [
    "RENDERER_VERSION",
    "SIDECAR_SCHEMA",
    "PixelTransform",
    "ContextIndex",
    "render_instance",
    "render_map",
    "render_benchmark",
    "load_benchmark",
]
