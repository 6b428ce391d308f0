"""The measure registry and the geometry every family shares.

A measure is registered with `@measure`; beside it, in the same family module, `@drawing_of`
attaches what to draw to explain one of its constraints and `@seeds_of` the exact edits that
make such a constraint hold, so a measure is defined in one place. Both read a `ConstraintScene`
(the constraint and the geometries it names) and stay pure shapely: no GUI, no runner.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely
from shapely.geometry import Point
from shapely.geometry.base import BaseGeometry

from scoring.support.registry import Registry

# (role, geometry) pairs in the task CRS; the roles are listed in scoring.constraints.explain.
Drawing = list[tuple[str, BaseGeometry]]
# Candidate edits of the target: each an operations list as a model would return it.
EditSeeds = Iterator[list[dict]]


@dataclass(frozen=True)
class ConstraintScene:
    """One constraint with the features it names: what drawings and edit seeds read."""

    constraint: Mapping[str, Any]
    geoms: Mapping[str, BaseGeometry]  # feature id -> geometry in the scene (edited, if it was)
    target: str  # the feature the edit moves
    initial: Mapping[str, BaseGeometry] = field(default_factory=dict)  # before the edit
    props: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    max_shift: float | None = None  # the displacement budget of the edit, where one is set

    @property
    def args(self) -> list[str]:
        return list(self.constraint["args"])

    @property
    def params(self) -> Mapping[str, Any]:
        return self.constraint.get("params") or {}

    def geom(self, fid: str) -> BaseGeometry:
        return self.geoms[fid]

    @property
    def target_geom(self) -> BaseGeometry:
        return self.geoms[self.target]

    def others(self) -> list[str]:
        """The constraint's features other than the target."""
        return [a for a in self.constraint["args"] if a != self.target]

    def wants(self) -> bool:
        """A predicate constraint asks for true (the default when no value is stated)."""
        return bool(self.constraint.get("value", True))


DrawFn = Callable[[ConstraintScene], Drawing]
SeedFn = Callable[[ConstraintScene], EditSeeds]
BatchFn = Callable[..., Any]
# A batch form's geometry argument: one geometry, or a numpy array of candidate geometries.
Geometries = BaseGeometry | np.ndarray


@dataclass(frozen=True)
class Measure:
    name: str
    fn: Callable[..., Any]
    kind: str  # "bool" | "number" | "angle" | "category" | "id" | "ids" | "matrix"
    unit: str | None
    definition: str  # the reference semantics
    postgis: str  # how to re-check it in PostGIS
    drawing: DrawFn | None = None  # what explains one of its constraints on a map
    edit_seeds: SeedFn | None = None  # exact edits that make one of its constraints hold
    batch: BatchFn | None = None  # fn over many candidate geometries at once (see batch_of)


MEASURES: Registry[Measure] = Registry("measure")


def measure(
    name: str, kind: str, unit: str | None, definition: str, postgis: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the measure `name` (its reference semantics and how to
    re-check it in PostGIS beside it)."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        MEASURES.add(name, Measure(name, fn, kind, unit, definition, postgis))
        return fn

    return deco


def _attach(names: tuple[str, ...], **hook: Any) -> None:
    for name in names:  # a hook sits below its measure, in the same module
        MEASURES.replace(name, dataclasses.replace(MEASURES[name], **hook))


def drawing_of(*names: str) -> Callable[[DrawFn], DrawFn]:
    """Decorator: `fn(ConstraintScene) -> Drawing` explains constraints over these measures."""

    def deco(fn: DrawFn) -> DrawFn:
        _attach(names, drawing=fn)
        return fn

    return deco


def seeds_of(*names: str) -> Callable[[SeedFn], SeedFn]:
    """Decorator: `fn(ConstraintScene) -> EditSeeds` proposes edits for these measures."""

    def deco(fn: SeedFn) -> SeedFn:
        _attach(names, edit_seeds=fn)
        return fn

    return deco


def batch_of(*names: str) -> Callable[[BatchFn], BatchFn]:
    """Decorator: `fn(*args, **params)` is the measure over many candidates at once. One of its
    geometry arguments is a numpy array of candidate geometries (the others single geometries);
    it returns an array holding, for each candidate, what the measure's own function returns
    (unrounded), computed by the same GEOS calls in the same argument order, so with the same
    doubles; -1 for an "id" measure where that is undefined. It returns None when it cannot take
    the array in that argument. The builder's edit search judges candidates with it at once
    (scoring.relations.edit_search), so it must agree with the measure bit for bit
    (tests/relations/test_edit_search.py checks every batch form)."""

    def deco(fn: BatchFn) -> BatchFn:
        _attach(names, batch=fn)
        return fn

    return deco


# ---------------------------------------------------------------- shared geometry


def ref_point(g: BaseGeometry) -> Point:
    return g if isinstance(g, Point) else g.centroid


def ref_points(g: BaseGeometry | np.ndarray) -> BaseGeometry | np.ndarray:
    """ref_point of one geometry or of each of an array of them."""
    if not isinstance(g, np.ndarray):
        return ref_point(g)
    return np.where(shapely.get_type_id(g) == shapely.GeometryType.POINT, g, shapely.centroid(g))


def azimuth(p: Point, q: Point) -> float:
    """Bearing from p to q: degrees clockwise from grid north, in [0, 360)."""
    deg = math.degrees(math.atan2(q.x - p.x, q.y - p.y)) % 360.0
    return 0.0 if deg >= 360.0 else deg


def angle_diff(a: float, b: float) -> float:
    """Smallest absolute difference between two angles in degrees (0..180)."""
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


DIRECTIONS4 = ("N", "E", "S", "W")
DIRECTIONS8 = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
RELATIVE = ("ahead", "right", "behind", "left")
AXES = ("N-S", "NE-SW", "E-W", "NW-SE")


def sector(angle: float, n: int) -> tuple[int, float]:
    """Index of the n-way sector (centred on 0, 360/n, ...) containing angle, and the margin in
    degrees to the nearest sector edge."""
    width = 360.0 / n
    shifted = (angle + width / 2.0) % 360.0
    idx = int(shifted // width) % n
    pos = shifted - idx * width
    return idx, min(pos, width - pos)


def sector_bounds(label: str, labels: tuple[str, ...]) -> tuple[float, float]:
    """[start, end) bearings of the sector named `label` among `labels` (centred on 0, 360/n, ...),
    the inverse of `sector`; e.g. ("E", DIRECTIONS4) -> (45.0, 135.0), ("N", ...) -> (315.0, 45.0)."""
    width = 360.0 / len(labels)
    centre = labels.index(label) * width
    return (centre - width / 2) % 360.0, (centre + width / 2) % 360.0


def outline(g: BaseGeometry) -> BaseGeometry:
    """A polygon's rings; a line or a point stands for itself."""
    return g.boundary if g.geom_type in ("Polygon", "MultiPolygon") else g
