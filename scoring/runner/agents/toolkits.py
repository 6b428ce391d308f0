"""Two toolkits answering the same measure calls: `Exact` (the oracle's GIS measures, the
"tools") and `Careless` (bounding boxes and centroids only)."""

from __future__ import annotations

import re

import shapely
from shapely.geometry import LineString, Point, box
from shapely.geometry.base import BaseGeometry

from scoring import oracle
from scoring.oracle import azimuth

ID_RX = r"F\d+"
NUM_RX = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


class UnrecognisedError(ValueError):
    """A question or constraint wording no parser recognises."""


# What a malformed scene, an unknown id or an unexpected wording can raise: the agent then answers
# as it would without the information instead of failing the request.
PROMPT_ERRORS = (
    UnrecognisedError,
    KeyError,
    IndexError,
    ValueError,
    TypeError,
    AttributeError,
    ZeroDivisionError,
    shapely.errors.ShapelyError,
)


def ids_in(text: str) -> list[str]:
    return re.findall(ID_RX, text)


class Exact:
    """The GIS tools: the oracle's own measures."""

    name = "tools"

    def topo(self, pred: str, c: BaseGeometry, a: BaseGeometry) -> bool:
        return bool(oracle.MEASURES[pred].fn(c, a))

    bearing = staticmethod(oracle.bearing)
    axis = staticmethod(oracle.axis)
    min_distance = staticmethod(oracle.min_distance)
    proximity = staticmethod(oracle.min_distance)  # what "nearest" is judged by
    boundary_distance = staticmethod(oracle.boundary_distance)
    manhattan = staticmethod(oracle.manhattan_distance)
    hausdorff = staticmethod(oracle.hausdorff_distance)

    @staticmethod
    def perimeter(g: BaseGeometry) -> float:
        return g.length

    @staticmethod
    def density(a: BaseGeometry, pois: list[BaseGeometry]) -> float:
        return oracle.poi_density(a, *pois)

    along_position = staticmethod(oracle.along_position)
    side = staticmethod(oracle.side_of_line)
    strictly_between = staticmethod(oracle.strictly_between)
    endpoint_connected = staticmethod(oracle.endpoint_connected)

    @staticmethod
    def level(props: dict) -> int | None:
        return oracle.vertical_level(props)


def bbox_of(g: BaseGeometry) -> BaseGeometry:
    return box(*g.bounds) if g.geom_type != "Point" else g


def centre_of(g: BaseGeometry) -> Point:
    x0, y0, x1, y1 = g.bounds
    return Point((x0 + x1) / 2, (y0 + y1) / 2)


def chord_of(line: BaseGeometry) -> BaseGeometry:
    """A line's chord from its first to its last vertex (the line itself when it is closed)."""
    if line.geom_type != "LineString" or line.coords[0] == line.coords[-1]:
        return line.boundary if line.geom_type == "Polygon" else line
    return LineString([line.coords[0], line.coords[-1]])


class Careless:
    """Bounding boxes and centroids only."""

    name = "centroid"

    def topo(self, pred: str, c: BaseGeometry, a: BaseGeometry) -> bool:
        bc, ba = bbox_of(c), bbox_of(a)
        gap = bc.distance(ba)
        inside = bc.within(ba) if ba.geom_type == "Polygon" else False
        if pred in ("equals", "equals_eps"):
            return all(abs(u - v) <= 0.5 for u, v in zip(c.bounds, a.bounds, strict=False))
        if pred == "disjoint":
            return gap > 0
        if pred == "intersects":
            return gap == 0
        if pred in ("touches", "touches_eps"):
            return gap <= 0.5 and bc.intersection(ba).area < 1.0
        if pred in ("crosses", "overlaps"):
            return gap == 0 and not inside and not (ba.geom_type == "Polygon" and ba.within(bc))
        if pred == "within":
            return inside
        if pred == "boundary_covered":
            return inside and bc.distance(ba.boundary) < 1.0
        if pred == "contained_properly":
            return inside and bc.distance(ba.boundary) >= 1.0
        return False

    @staticmethod
    def bearing(a, b) -> float:
        return azimuth(centre_of(a), centre_of(b))

    @staticmethod
    def axis(line) -> str:
        x0, y0, x1, y1 = line.bounds
        w, h = x1 - x0, y1 - y0
        if w > 2.4 * h:
            return "E-W"
        if h > 2.4 * w:
            return "N-S"
        return "NE-SW"  # a bbox cannot tell the two diagonals apart

    @staticmethod
    def min_distance(a, b) -> float:
        return bbox_of(a).distance(bbox_of(b))

    @staticmethod
    def boundary_distance(a, b) -> float:
        return oracle.outline(bbox_of(a)).distance(oracle.outline(bbox_of(b)))

    @staticmethod
    def manhattan(a, b) -> float:
        p, q = centre_of(a), centre_of(b)
        return abs(p.x - q.x) + abs(p.y - q.y)

    @staticmethod
    def hausdorff(a, b) -> float:
        return centre_of(a).distance(centre_of(b))

    @staticmethod
    def proximity(a, b) -> float:
        """What "nearest" is judged by: the distance between centres."""
        return centre_of(a).distance(centre_of(b))

    @staticmethod
    def perimeter(g) -> float:
        return bbox_of(g).length

    @staticmethod
    def density(a, pois) -> float:
        bb = bbox_of(a)
        return sum(1 for p in pois if p.covered_by(bb)) / (bb.area / 1e6)

    @staticmethod
    def along_position(line, g) -> float:
        return chord_of(line).project(centre_of(g))

    @staticmethod
    def side(line, g) -> str:
        return oracle.side_of_line(chord_of(line), centre_of(g))

    @staticmethod
    def strictly_between(a, b, c) -> bool:
        return LineString([centre_of(a), centre_of(b)]).distance(centre_of(c)) < 10.0

    @staticmethod
    def endpoint_connected(a, b) -> bool:
        return bbox_of(a).distance(bbox_of(b)) <= 0.5

    @staticmethod
    def level(props: dict) -> int | None:
        try:
            return int(props.get("layer") or 0)  # ignores bridge / tunnel, never refuses
        except (TypeError, ValueError):
            return 0


TOOLS, CARELESS = Exact(), Careless()

# What a question handler is given to measure with.
Toolkit = Exact | Careless
