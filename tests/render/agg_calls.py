"""Every drawing call that reaches a RendererAgg's C renderer, recorded argument by argument in a
comparable form (arrays as bytes, floats as hex, transforms as their matrices, graphics contexts
as every attribute and getter the C side reads): two ways of drawing that record the same calls
draw the same pixels."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from enum import Enum
from typing import Any

import numpy as np
from matplotlib.backend_bases import GraphicsContextBase
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.font_manager import FontProperties
from matplotlib.ft2font import FT2Font, FT2Image
from matplotlib.path import Path
from matplotlib.transforms import BboxBase, Transform, TransformedPath

_GC_GETTERS = (
    "get_dashes",
    "get_clip_path",
    "get_snap",
    "get_hatch_path",
    "get_hatch_color",
    "get_hatch_linewidth",
    "get_sketch_params",
)


def canon(v: Any) -> Any:
    """A hashable, exactly comparable form of a drawing call's argument."""
    if isinstance(v, GraphicsContextBase):
        attrs = tuple(sorted((k, canon(x)) for k, x in vars(v).items()))
        return ("gc", attrs, tuple(canon(getattr(v, g)()) for g in _GC_GETTERS))
    if isinstance(v, Path):
        return ("path", canon(v.vertices), canon(v.codes), v.should_simplify, canon(v.simplify_threshold))
    if isinstance(v, TransformedPath):
        return ("clip path", canon(v.get_transformed_path_and_affine()))
    if isinstance(v, (Transform, BboxBase)):
        return ("matrix", canon(np.asarray(v)))  # all the C side reads of either
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.str, v.shape, np.ascontiguousarray(v).tobytes())
    if isinstance(v, (bool, np.bool_)):
        return ("bool", bool(v))
    if isinstance(v, (float, np.floating)):
        return ("float", float(v).hex())
    if isinstance(v, (int, np.integer)):
        return ("int", int(v))
    if isinstance(v, (list, tuple)):
        return tuple(canon(x) for x in v)
    if isinstance(v, FT2Font):  # a text's bitmap, drawn from the font's buffer
        return ("text image", canon(np.asarray(v.get_image())))
    if isinstance(v, FT2Image):  # a math text's bitmap
        return ("text image", canon(np.asarray(v)))
    if isinstance(v, FontProperties):
        return ("font", str(v.get_file()), v.get_size_in_points())
    if v is None or isinstance(v, (str, Enum)):
        return v
    raise TypeError(f"no canonical form for {type(v).__name__}")


class _Recorder:
    """Stands in for RendererAgg._renderer: records draw* calls, forwards everything."""

    def __init__(self, real: Any, calls: list):
        self._real = real
        self._calls = calls

    def __getattr__(self, name: str) -> Any:
        f = getattr(self._real, name)
        if not name.startswith("draw"):
            return f

        def record(*args, **kwargs):
            self._calls.append((name, canon(args), canon(sorted(kwargs.items()))))
            return f(*args, **kwargs)

        return record


@contextlib.contextmanager
def recording(renderer: RendererAgg) -> Iterator[list]:
    """The list of calls made to `renderer`'s C renderer inside the block."""
    calls: list = []
    real = renderer._renderer
    renderer._renderer = _Recorder(real, calls)
    renderer._update_methods()  # draw_markers, draw_path_collection... are bound from it
    try:
        yield calls
    finally:
        renderer._renderer = real
        renderer._update_methods()
