"""Drawing the map's layers: the OSM context (water, land use, buildings, roads, POIs) and the task
features above it, in pixel coordinates."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import matplotlib
import numpy as np
import shapely
from matplotlib.path import Path as MplPath
from shapely.geometry import box

from scoring.geometry.georef import PixelTransform
from scoring.render.backend.artists import (
    dots,
    line_collection,
    line_collection_of_paths,
    path_collection,
    path_patch,
)
from scoring.render.backend.canvas import add_patch
from scoring.render.backend.shapes import (
    line_paths,
    line_segments_each,
    points_xy,
    poly_paths_each,
)
from scoring.render.context import POOLS, ContextIndex
from scoring.render.features import MapSubject, TaskFeature, fid_key, geom_type
from scoring.render.style import px_to_pt

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels, y down

_COUNTED = ("water", "area", "building", "road", "poi")  # the pools counted, in the sidecar's order


def draw_context(
    ax, context: ContextIndex | None, style: dict[str, Any], pt: PixelTransform, bounds_px, zbase=1.0
) -> dict[str, int]:
    """The OSM context inside `bounds_px` (pixels of `pt`); the number of features drawn per pool."""
    counts = dict.fromkeys(_COUNTED, 0)
    if context is None:
        return counts
    shown = _ContextInView.of(context, pt, bounds_px)
    if shown is None:
        return counts
    counts.update(shown.counts(bounds_px))
    st = style["context"]
    # the pools' z-orders interleave (zbase - 0.2 ... zbase + 0.5): draw them in this order
    _draw_water(ax, shown, st, zbase)
    _draw_areas(ax, shown, st, zbase)
    _draw_roads(ax, shown, st, pt, zbase)
    _draw_pois(ax, shown, st, zbase)
    return counts


@dataclass
class _ContextInView:
    """The context features inside a view, clipped and in the view's pixels, with their pools."""

    context: ContextIndex
    idx: np.ndarray  # positions in `context` of the features shown
    geoms: np.ndarray  # their geometries, in pixels
    in_pool: dict[str, np.ndarray]  # pool -> mask over `idx`
    polygonal: np.ndarray  # mask over `idx`
    path_at: dict[int, MplPath | None]  # position in `idx` -> path, for every polygon drawn

    @classmethod
    def of(cls, context: ContextIndex, pt: PixelTransform, bounds_px: Box) -> _ContextInView | None:
        """What of `context` shows inside `bounds_px`, or None when nothing does."""
        x0, y0, x1, y1 = bounds_px
        mx0, my1 = pt.pixel_to_3857(x0, y0)
        mx1, my0 = pt.pixel_to_3857(x1, y1)
        # a margin for strokes crossing the edge
        pad = 0.02 * (float(mx1) - float(mx0))
        bounds = (float(mx0) - pad, float(my0) - pad, float(mx1) + pad, float(my1) + pad)
        idx = context.query(bounds)
        if not len(idx):
            return None
        geoms = shapely.clip_by_rect(context.geoms[idx], *bounds)
        g = pt.resolution
        gx, gy = pt.geotransform[0], pt.geotransform[3]

        def aff(c):
            return np.column_stack([(c[:, 0] - gx) / g, (gy - c[:, 1]) / g])

        geoms = shapely.transform(geoms, aff)
        shown = ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))
        idx, geoms = idx[shown], geoms[shown]
        pool_of = context.pool_codes()[idx]
        in_pool = {p: pool_of == i for i, p in enumerate(POOLS)}
        polygonal = np.isin(shapely.get_type_id(geoms), _POLYGONAL)
        # the paths of every polygon drawn (water, areas, buildings) made in one pass
        drawn = np.flatnonzero(polygonal & (in_pool["water"] | in_pool["area"] | in_pool["building"]))
        path_at = dict(zip(drawn.tolist(), poly_paths_each(geoms[drawn]), strict=True))
        return cls(context, idx, geoms, in_pool, polygonal, path_at)

    def counts(self, bounds_px: Box) -> dict[str, int]:
        """The number of features shown per pool."""
        counts = {p: int(np.count_nonzero(self.in_pool[p])) for p in _COUNTED}
        # water counts (and gets a legend entry) only where it shows: a few pixels inside the
        # view, not merely in the margin fetched for strokes crossing the edge
        view = box(*bounds_px)
        water_at = np.flatnonzero(self.in_pool["water"])
        counts["water"] = int(
            np.count_nonzero(shapely.area(shapely.intersection(self.geoms[water_at], view)) >= 4.0)
        )
        return counts

    def poly_paths_at(self, positions: np.ndarray) -> list[MplPath]:
        """The paths of the polygons at these positions of `idx` (empty ones left out)."""
        return [p for i in positions.tolist() if (p := self.path_at[i]) is not None]


def _draw_water(ax, shown: _ContextInView, st: dict[str, Any], zbase: float) -> None:
    """Water polygons: the sea (derived from the coastline) under everything, lakes, rivers and
    basins over land use (a pond in a park) but under buildings, roads and POIs."""
    water = st.get("water")
    if water is None:
        return
    water_at = np.flatnonzero(shown.in_pool["water"])
    props = shown.context.props
    is_sea = np.array([props[j].get("water") == "sea" for j in shown.idx[water_at]], dtype=bool)
    for sea, z in ((True, zbase - 0.2), (False, zbase + 0.05)):
        paths = shown.poly_paths_at(water_at[shown.polygonal[water_at] & (is_sea == sea)])
        if paths:
            ax.add_collection(
                path_collection(
                    paths,
                    facecolors=water["face"],
                    edgecolors=water["edge"],
                    linewidths=px_to_pt(water["width"]),
                    zorder=z,
                ),
                autolim=False,
            )


def _draw_areas(ax, shown: _ContextInView, st: dict[str, Any], zbase: float) -> None:
    """Land use / areas, then buildings (polygon POIs are drawn as dots, not as buildings)."""
    for pool, z in (("area", zbase), ("building", zbase + 0.1)):
        paths = shown.poly_paths_at(np.flatnonzero(shown.in_pool[pool] & shown.polygonal))
        if paths:
            ax.add_collection(
                path_collection(
                    paths,
                    facecolors=st[pool]["face"],
                    edgecolors=st[pool]["edge"],
                    linewidths=px_to_pt(st[pool]["width"]),
                    zorder=z,
                ),
                autolim=False,
            )


def _draw_roads(ax, shown: _ContextInView, st: dict[str, Any], pt: PixelTransform, zbase: float) -> None:
    """Roads: footpaths dashed, then the casings of every class, then their fills, so junctions
    merge."""
    lw = px_to_pt
    classes = st["road_classes"]
    segments_of = _road_segments_by_class(shown, st)
    if -1 in segments_of:
        lc = line_collection(
            segments_of[-1],
            colors=st["path"]["color"],
            linewidths=lw(st["path"]["width"]),
            linestyles=[(0, tuple(lw(v) / lw(st["path"]["width"]) for v in st["path"]["dash"]))],
            capstyle="butt",
            joinstyle="round",
            zorder=zbase + 0.2,
        )
        ax.add_collection(lc, autolim=False)
    # roads widen a little when zoomed in (large scale), thin out when zoomed out
    zoom = min(max(math.sqrt(0.3 / max(pt.ground_pixel_size(), 1e-6)), 0.75), 1.8)
    # each class's paths are built once, for its casing and its fill
    class_paths = [line_paths(segments_of.get(ci, [])) for ci in range(len(classes))]
    for color, widen, z in ((st["road_casing"], 2.0, zbase + 0.3), (st["road_fill"], 0.0, zbase + 0.4)):
        for ci in reversed(range(len(classes))):
            if class_paths[ci]:
                ax.add_collection(
                    line_collection_of_paths(
                        class_paths[ci],
                        colors=color,
                        linewidths=lw(classes[ci]["width"] * zoom + widen),
                        capstyle="round",
                        joinstyle="round",
                        zorder=z,
                    ),
                    autolim=False,
                )


def _road_segments_by_class(shown: _ContextInView, st: dict[str, Any]) -> dict[int, list[np.ndarray]]:
    """Every road's segments, by road class (its index in `road_classes`; -1 for paths), in one
    pass and then gathered, in order, as if made class by class."""
    classes = st["road_classes"]
    kind = shown.context.road_kinds([c["highways"] for c in classes], st["path"]["highways"])[shown.idx]
    roads = np.flatnonzero(shown.in_pool["road"])
    segments_of: dict[int, list[np.ndarray]] = {}
    for rk, segs in zip(kind[roads].tolist(), line_segments_each(shown.geoms[roads]), strict=True):
        segments_of.setdefault(rk, []).extend(segs)
    return segments_of


def _draw_pois(ax, shown: _ContextInView, st: dict[str, Any], zbase: float) -> None:
    """POIs as dots, above everything else of the context."""
    pois = shown.geoms[shown.in_pool["poi"]]
    if len(pois):
        xy = points_xy(pois)
        ax.add_line(
            dots(
                xy[:, 0],
                xy[:, 1],
                size=px_to_pt(st["poi"]["size"]),
                face=st["poi"]["face"],
                edge=st["poi"]["edge"],
                edge_width=px_to_pt(1.0),
                zorder=zbase + 0.5,
            )
        )


_POLYGONAL = (shapely.GeometryType.POLYGON, shapely.GeometryType.MULTIPOLYGON)
_POLYGON_TYPES = ("Polygon", "MultiPolygon")
_LINE_TYPES = ("LineString", "MultiLineString")
# the stacking order of task features by geometry type: polygons, then lines, then points
_RANK = {"Polygon": 0, "MultiPolygon": 0, "LineString": 1, "MultiLineString": 1, "Point": 2, "MultiPoint": 2}


def draw_task(
    ax, subject: MapSubject, geoms_by_fid: dict[str, Any], style: dict[str, Any], zbase=10.0
) -> None:
    """Task features above the context. All white halos go below all coloured strokes and the
    stacking order depends only on geometry type and feature id, never on attributes (layer,
    bridge...): a road's halo must not cut another road like a bridge casing would, or a
    withheld `layer` would leak through the drawing."""
    # the target's stroke is the widest and goes first in its class, so where another
    # feature coincides with it (equal / shared edges) a fringe of the target colour shows
    feats = sorted(
        subject.features,
        key=lambda f: (_RANK.get(geom_type(geoms_by_fid[f.fid]), 3), not f.target, fid_key(f.fid)),
    )
    # every feature's path and segments made in one pass (each as made of it alone)
    types = [geom_type(geoms_by_fid[f.fid]) for f in feats]
    polygons = [geoms_by_fid[f.fid] for f, gt in zip(feats, types, strict=True) if gt in _POLYGON_TYPES]
    lines = [geoms_by_fid[f.fid] for f, gt in zip(feats, types, strict=True) if gt in _LINE_TYPES]
    polygon_paths = iter(poly_paths_each(polygons))
    line_segs = iter(line_segments_each(lines))
    for f, gt in zip(feats, types, strict=True):
        rank = _RANK.get(gt, 3)
        z_halo = zbase + rank - 0.5 if rank == 0 else zbase + 0.5  # line/point halos under all strokes
        z = zbase + rank
        if gt in _POLYGON_TYPES:
            path = next(polygon_paths)
            if path is not None:
                _draw_task_polygon(ax, f, path, style, z_halo, z)
        elif gt in _LINE_TYPES:
            _draw_task_line(ax, f, next(line_segs), style["task"], z_halo, z)
        else:
            _draw_task_point(ax, f, geoms_by_fid[f.fid], style["task"], z)
    if subject.levels:
        _draw_crossings(ax, subject, geoms_by_fid, style["task"]["crossing"], zbase + 1.5)


def _draw_task_polygon(
    ax, f: TaskFeature, path: MplPath, style: dict[str, Any], z_halo: float, z: float
) -> None:
    """A task polygon: its knockout (for some kinds), its halo, then its tinted fill and edge."""
    t = style["task"]
    ew = t["target_polygon_edge_width"] if f.target else t["polygon_edge_width"]
    alpha = t["polygon_alpha"].get(f.kind, 0.3)
    if f.kind in t.get("knockout_kinds", []):
        # hide the context underneath (often the very same OSM object) for a clean fill
        add_patch(
            ax,
            path_patch(path, facecolor=style["background"], edgecolor="none", zorder=z_halo - 0.1),
        )
    face = matplotlib.colors.to_rgba(f.color, alpha)
    add_patch(
        ax,
        path_patch(
            path,
            facecolor="none",
            edgecolor=t["halo_color"],
            lw=px_to_pt(ew + 2 * t["halo_width"] - 1),
            joinstyle="round",
            zorder=z_halo,
        ),
    )
    add_patch(
        ax,
        path_patch(path, facecolor=face, edgecolor=f.color, lw=px_to_pt(ew), joinstyle="round", zorder=z),
    )


def _draw_task_line(
    ax, f: TaskFeature, segs: list[np.ndarray], t: dict[str, Any], z_halo: float, z: float
) -> None:
    """A task line: its halo, then its stroke."""
    w = t["target_line_width"] if f.target else t["line_width"]
    ax.add_collection(
        line_collection(
            segs,
            colors=t["halo_color"],
            linewidths=px_to_pt(w + 2 * t["halo_width"]),
            capstyle="round",
            joinstyle="round",
            zorder=z_halo,
        ),
        autolim=False,
    )
    ax.add_collection(
        line_collection(
            segs, colors=f.color, linewidths=px_to_pt(w), capstyle="round", joinstyle="round", zorder=z
        ),
        autolim=False,
    )


def _draw_task_point(ax, f: TaskFeature, geom: Any, t: dict[str, Any], z: float) -> None:
    """A task point: a coloured dot ringed by the halo, with a white centre."""
    size = t["target_point_size"] if f.target else t["point_size"]
    xy = points_xy([geom])
    ax.add_line(
        dots(
            xy[:, 0],
            xy[:, 1],
            size=px_to_pt(size),
            face=f.color,
            edge=t["halo_color"],
            edge_width=px_to_pt(3.0),
            zorder=z,
        )
    )
    ax.add_line(
        dots(
            xy[:, 0],
            xy[:, 1],
            size=px_to_pt(3.5),
            face="#ffffff",
            edge="none",
            zorder=z + 0.05,
        )
    )


def _draw_crossings(
    ax, subject: MapSubject, geoms_by_fid: dict[str, Any], cst: dict[str, Any], z: float
) -> None:
    """Whichever stroke is drawn last looks like the upper road. Where task roads cross, a
    neutral disc covers both strokes, so only the cards (or nothing, when withheld) tell the
    vertical order."""
    xy = crossings(subject.features, geoms_by_fid)
    if len(xy):
        ax.add_line(
            dots(
                xy[:, 0],
                xy[:, 1],
                size=px_to_pt(cst["size"]),
                face=cst["face"],
                edge=cst["edge"],
                edge_width=px_to_pt(cst["edge_width"]),
                zorder=z,
            )
        )


def crossings(features: list[TaskFeature], geoms_by_fid: dict[str, Any]) -> np.ndarray:
    """Pixel points where two task lines cross (sorted, for determinism)."""
    lines = [
        geoms_by_fid[f.fid]
        for f in features
        if geom_type(geoms_by_fid[f.fid]) in ("LineString", "MultiLineString")
    ]
    pts = []
    for i, a in enumerate(lines):
        for b in lines[i + 1 :]:
            for part in shapely.get_parts(a.intersection(b)):
                p = part if geom_type(part) == "Point" else part.representative_point()
                pts.append((round(p.x, 3), round(p.y, 3)))
    return np.array(sorted(set(pts)), dtype=float).reshape(-1, 2)
