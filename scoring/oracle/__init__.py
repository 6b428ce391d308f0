"""Stage 2 — the geometric oracle (GEOS via shapely).

Small typed functions named after the predicate or measure they compute, registered by name so
that facts (what an answer was derived from) and constraints (what an edit must satisfy) are
plain data that anyone can re-check from the scene alone. Every function works in the task CRS
(metres, +y = grid north). Each registry entry carries its PostGIS equivalent for independent
re-verification, and beside it, in its family's module, how to draw one of its constraints and
which exact edits make one hold (see `core`).

Conventions:
- ref(g): the reference point of a feature = its centroid (ST_Centroid); a point is its own.
- bearing: degrees clockwise from grid north (+y), in [0, 360).
- lines are directed from their first vertex to their last.
"""

from __future__ import annotations

from scoring.oracle.core import (
    AXES,
    DIRECTIONS4,
    DIRECTIONS8,
    MEASURES,
    RELATIVE,
    ConstraintScene,
    Drawing,
    EditSeeds,
    Measure,
    angle_diff,
    azimuth,
    measure,
    outline,
    ref_point,
    ref_points,
    sector,
    sector_bounds,
)

# The family modules register their measures on import, in the catalogue's order.
# isort: split
from scoring.oracle.topology import (
    EDIT_EPS,
    boundary_covered,
    boundary_covered_eps,
    contained_properly,
    contained_properly_eps,
    covered_by,
    crosses,
    crosses_eps,
    de9im,
    disjoint,
    equals,
    equals_eps,
    intersects,
    overlaps,
    touches,
    touches_eps,
    within,
)

# isort: split
from scoring.oracle.direction import (
    axis,
    bearing,
    direction4,
    direction8,
    line_axis_azimuth,
    relative_direction,
)

# isort: split
from scoring.oracle.metric import (
    HAUSDORFF_DENSIFY,
    area,
    boundary_distance,
    count_within_distance,
    displacement,
    hausdorff_distance,
    manhattan_distance,
    min_distance,
    nearest,
    perimeter_total,
    poi_density,
    within_distance,
)

# isort: split
from scoring.oracle.ordering import (
    ATTRIBUTE_MEASURES,
    along_next,
    along_order,
    along_position,
    endpoint_connected,
    level_above,
    same_side,
    side_of_line,
    strictly_between,
    vertical_level,
)

__all__ = [
    "ATTRIBUTE_MEASURES",
    "AXES",
    "DIRECTIONS4",
    "DIRECTIONS8",
    "EDIT_EPS",
    "HAUSDORFF_DENSIFY",
    "MEASURES",
    "RELATIVE",
    "ConstraintScene",
    "Drawing",
    "EditSeeds",
    "Measure",
    "along_next",
    "along_order",
    "along_position",
    "angle_diff",
    "area",
    "axis",
    "azimuth",
    "bearing",
    "boundary_covered",
    "boundary_covered_eps",
    "boundary_distance",
    "contained_properly",
    "contained_properly_eps",
    "count_within_distance",
    "covered_by",
    "crosses",
    "crosses_eps",
    "de9im",
    "direction4",
    "direction8",
    "disjoint",
    "displacement",
    "endpoint_connected",
    "equals",
    "equals_eps",
    "hausdorff_distance",
    "intersects",
    "level_above",
    "line_axis_azimuth",
    "manhattan_distance",
    "measure",
    "min_distance",
    "nearest",
    "outline",
    "overlaps",
    "perimeter_total",
    "poi_density",
    "ref_point",
    "ref_points",
    "relative_direction",
    "same_side",
    "sector",
    "sector_bounds",
    "side_of_line",
    "strictly_between",
    "touches",
    "touches_eps",
    "vertical_level",
    "within",
    "within_distance",
]
