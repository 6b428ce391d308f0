"""Render one benchmark instance as an annotated, georeferenced 1536 x 1536 PNG (matplotlib/Agg).

Everything is drawn in PIXEL coordinates (x = column, y = row, origin at the top-left corner of
the image): geometries go task CRS -> EPSG:4326 -> EPSG:3857 (pyproj) -> pixels (affine). That
makes every recorded bbox exact and independent of matplotlib's transforms.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import PIL
import pyproj
import shapely
import shapely.ops
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import PathPatch, Rectangle
from matplotlib.patches import Polygon as MplPolygon
from matplotlib.path import Path as MplPath
from matplotlib.text import Text
from PIL import Image
from shapely.geometry import box, shape
from shapely.geometry.polygon import orient

import scoring.render.style  # noqa: F401 - first: selects Agg, silences Debian's stray mpl_toolkits
from scoring.errors import InputError, OutputError
from scoring.render.context import ContextIndex
from scoring.render.labels import (
    LabelItem,
    Placement,
    is_large_polygon,
    obstacle_for,
    place_box,
    place_labels,
)
from scoring.render.style import DPI, PINNED_RC, font, load_style, px_to_pt
from scoring.render.transform import PixelTransform, grid_convergence_at, m3857_to_lonlat, task_to_3857
from scoring.render.version import RENDERER_VERSION, SIDECAR_SCHEMA

ATTRIBUTION = "© OpenStreetMap contributors"
_ID_RE = re.compile(r"^[A-Za-z0-9._-]+$")
_EPSG_RE = re.compile(r"EPSG:{1,2}(?:[0-9.]*:)?(\d+)$")
MARGIN = 16.0  # px between furniture and the image edge
LEVEL_ATTRIBUTES = ("layer", "bridge", "tunnel")


# ----------------------------------------------------------------------------------------------
# input
# ----------------------------------------------------------------------------------------------
@dataclass
class TaskFeature:
    fid: str
    kind: str
    props: dict[str, Any]
    geom_task: Any
    geom_3857: Any = None
    geom_px: Any = None
    color: str = "#000000"
    target: bool = False


def task_epsg_of(instance: dict[str, Any], default: int | None = None) -> int:
    name = (((instance.get("scene") or {}).get("crs") or {}).get("properties") or {}).get("name", "")
    m = _EPSG_RE.search(str(name))
    if m:
        return int(m.group(1))
    if default is None:
        raise InputError(f"instance {instance.get('id')}: scene has no EPSG crs")
    return int(default)


def scene_features(instance: dict[str, Any]) -> list[TaskFeature]:
    feats = []
    for f in (instance.get("scene") or {}).get("features", []):
        props = dict(f.get("properties") or {})
        fid = str(props.get("id", f.get("id")))
        geom = shape(f["geometry"])
        if geom.is_empty:
            continue
        feats.append(TaskFeature(fid, str(props.get("kind", "feature")), props, geom))
    if not feats:
        raise InputError(f"instance {instance.get('id')}: scene has no features")
    return feats


def assign_colors(features: list[TaskFeature], palette: list[str], target_color: str) -> None:
    """The target (and F0) get the target colour; the others take palette colours in id order.
    Once every palette colour is used, a colour is reused where its nearest same-coloured
    feature is farthest away, so two features of one colour are never neighbours."""
    used: dict[str, list[TaskFeature]] = {}
    for f in features:
        if f.target or f.fid == "F0":
            f.color = target_color
            continue
        free = [c for c in palette if c not in used]
        if free:
            f.color = free[0]
        else:

            def gap(c):
                return min(f.geom_px.distance(o.geom_px) for o in used[c])

            f.color = max(palette, key=lambda c: (gap(c), -palette.index(c)))
        used.setdefault(f.color, []).append(f)


# ----------------------------------------------------------------------------------------------
# view
# ----------------------------------------------------------------------------------------------
def compute_view(geoms_3857: list, style: dict[str, Any]) -> tuple[float, float, float]:
    """(x_min, y_max, resolution) of the square EPSG:3857 view around the scene."""
    n = style["image_px"]
    minx, miny, maxx, maxy = shapely.total_bounds(np.array(geoms_3857, dtype=object))
    cx, cy = (minx + maxx) / 2.0, (miny + maxy) / 2.0
    _, lat = m3857_to_lonlat(cx, cy)
    side = max(maxx - minx, maxy - miny) * (1.0 + 2.0 * style["view"]["padding"])
    min_side = style["view"]["min_side_m"] / _ground_per_3857(cx, cy)
    side = max(side, min_side)
    res = side / n
    return cx - side / 2.0, cy + side / 2.0, res


def _ground_per_3857(x: float, y: float) -> float:
    """Ground metres (east-west, geodesic) per EPSG:3857 metre at (x, y)."""
    return PixelTransform.from_view(x - 0.5, y + 0.5, 1.0, 1, 1, 4326).ground_pixel_size(0.5, 0.5)


# ----------------------------------------------------------------------------------------------
# geometry -> matplotlib paths (pixel space)
# ----------------------------------------------------------------------------------------------
def _poly_path(geoms) -> MplPath | None:
    verts, codes = [], []
    for g in geoms:
        for part in shapely.get_parts(g):
            if part.geom_type != "Polygon" or part.is_empty:
                continue
            if part.interiors:  # holes need the opposite winding of their shell (nonzero fill rule)
                part = orient(part, 1.0)
            for ring in (part.exterior, *part.interiors):
                c = np.asarray(ring.coords)[:, :2]
                if len(c) < 4:
                    continue
                k = np.full(len(c), MplPath.LINETO, dtype=np.uint8)
                k[0] = MplPath.MOVETO
                k[-1] = MplPath.CLOSEPOLY
                verts.append(c)
                codes.append(k)
    if not verts:
        return None
    return MplPath(np.concatenate(verts), np.concatenate(codes))


def _poly_paths(geoms) -> list[MplPath]:
    out = []
    for g in geoms:
        p = _poly_path([g])
        if p is not None:
            out.append(p)
    return out


def _line_segments(geoms) -> list[np.ndarray]:
    out = []
    for g in geoms:
        if g.geom_type in ("Polygon", "MultiPolygon"):
            g = g.boundary
        for part in shapely.get_parts(g):
            if part.geom_type in ("LineString", "LinearRing") and not part.is_empty:
                out.append(np.asarray(part.coords)[:, :2])
    return out


def _points_xy(geoms) -> np.ndarray:
    pts = []
    for g in geoms:
        if g.geom_type in ("Point", "MultiPoint"):
            pts.extend(np.asarray(p.coords)[0, :2] for p in shapely.get_parts(g))
        else:
            p = g.representative_point()
            pts.append((p.x, p.y))
    return np.array(pts, dtype=float).reshape(-1, 2)


# ----------------------------------------------------------------------------------------------
# formatting
# ----------------------------------------------------------------------------------------------
def _fmt_value(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _fmt_length(m: float) -> str:
    if m >= 1000:
        km = m / 1000.0
        return f"{km:g} km"
    return f"{m:g} m"


def _nice_length(target_m: float) -> float:
    exp = math.floor(math.log10(target_m))
    best = None
    for e in (exp - 1, exp, exp + 1):
        for m in (1, 2, 5):
            v = m * 10.0**e
            if v <= target_m * 1.3 and (best is None or v > best):
                best = v
    return best or 10.0**exp


def _sanitize_id(iid: Any) -> str:
    iid = str(iid)
    if not _ID_RE.match(iid):
        raise InputError(f"instance id {iid!r} is not usable as a file name")
    return iid


# ----------------------------------------------------------------------------------------------
# the renderer
# ----------------------------------------------------------------------------------------------
class _Map:
    def __init__(self, instance: dict[str, Any], context: ContextIndex, style: dict[str, Any]):
        self.inst = instance
        self.context = context
        self.style = style
        self.n = int(style["image_px"])
        self.iid = _sanitize_id(instance.get("id"))
        self.task_epsg = task_epsg_of(instance, context.task_epsg if context is not None else None)
        self.features = scene_features(instance)
        self.texts: list[dict[str, Any]] = []
        info = instance.get("information") or {}
        self.withheld = [str(a) for a in info.get("withheld") or []]
        self.attributes = [str(a) for a in info.get("attributes") or [] if str(a) not in self.withheld]
        self.is_edit = instance.get("task") == "edit"
        # questions about vertical order (O06): the drawing must not suggest which road is on top
        self.levels = any(a in LEVEL_ATTRIBUTES for a in self.attributes + self.withheld)
        self.target_id = str(instance.get("target", "F0"))

    # ---- setup -----------------------------------------------------------------------------
    def prepare(self):
        st = self.style
        for f in self.features:

            def fwd(c, epsg=self.task_epsg):
                x, y = task_to_3857(c[:, 0], c[:, 1], epsg)
                return np.column_stack([x, y])

            f.geom_3857 = shapely.transform(f.geom_task, fwd)
        x_min, y_max, res = compute_view([f.geom_3857 for f in self.features], st)
        self.pt = PixelTransform.from_view(x_min, y_max, res, self.n, self.n, self.task_epsg)
        for f in self.features:
            f.geom_px = self.pt.geometry_3857_to_pixel(f.geom_3857)
            f.target = f.fid == self.target_id if self.is_edit else f.fid == "F0"
        assign_colors(self.features, st["task"]["palette"], st["task"]["target_color"])
        self.fig = Figure(figsize=(self.n / DPI, self.n / DPI), dpi=DPI, facecolor=st["background"])
        self.canvas = FigureCanvasAgg(self.fig)
        self.renderer = self.canvas.get_renderer()
        self.ax = self._axes((0.0, 0.0, float(self.n), float(self.n)), zorder=0)

    def _axes(self, bbox, zorder):
        x0, y0, x1, y1 = bbox
        n = self.n
        ax = self.fig.add_axes((x0 / n, 1.0 - y1 / n, (x1 - x0) / n, (y1 - y0) / n), zorder=zorder)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y1, y0)
        ax.set_autoscale_on(False)
        ax.set_axis_off()
        return ax

    def measure(self, s: str, prop) -> tuple[float, float]:
        t = Text(0, 0, s, fontproperties=prop)
        t.set_figure(self.fig)
        bb = t.get_window_extent(self.renderer)
        return float(bb.width), float(bb.height)

    def text(self, ax, x, y, s, prop, role, color="#222222", ha="left", va="center", **kw):
        t = ax.text(
            x,
            y,
            s,
            fontproperties=prop,
            color=color,
            ha=ha,
            va=va,
            zorder=kw.pop("zorder", 40),
            clip_on=False,
            **kw,
        )
        self.texts.append({"role": role, "text": s, "anchor": [round(float(x), 2), round(float(y), 2)]})
        return t

    # ---- geometry helpers ---------------------------------------------------------------------
    def clearance(self, f: TaskFeature) -> float:
        t = self.style["task"]
        g = f.geom_px.geom_type
        if g in ("Point", "MultiPoint"):
            size = t["target_point_size"] if f.target else t["point_size"]
            return size / 2.0 + 4.0
        if g in ("LineString", "MultiLineString"):
            w = t["target_line_width"] if f.target else t["line_width"]
            return w / 2.0 + t["halo_width"] + 2.0
        w = t["target_polygon_edge_width"] if f.target else t["polygon_edge_width"]
        return w / 2.0 + 4.0

    def pixel_extent(self, f: TaskFeature) -> float:
        x0, y0, x1, y1 = f.geom_px.bounds
        return max(x1 - x0, y1 - y0)

    # ---- context ------------------------------------------------------------------------------
    def draw_context(self, ax, pt: PixelTransform, bounds_px, zbase=1.0) -> dict[str, int]:
        st = self.style["context"]
        x0, y0, x1, y1 = bounds_px
        mx0, my1 = pt.pixel_to_3857(x0, y0)
        mx1, my0 = pt.pixel_to_3857(x1, y1)
        pad = 0.02 * (mx1 - mx0)
        bounds = (float(mx0) - pad, float(my0) - pad, float(mx1) + pad, float(my1) + pad)
        idx = self.context.query(bounds) if self.context is not None else np.empty(0, int)
        counts = {"water": 0, "area": 0, "building": 0, "road": 0, "poi": 0}
        if not len(idx):
            return counts
        geoms = shapely.clip_by_rect(self.context.geoms[idx], *bounds)
        g = pt.resolution
        gx, gy = pt.geotransform[0], pt.geotransform[3]

        def aff(c):
            return np.column_stack([(c[:, 0] - gx) / g, (gy - c[:, 1]) / g])

        geoms = shapely.transform(geoms, aff)
        by_pool: dict[str, list[tuple[Any, dict]]] = {p: [] for p in counts}
        for j, gi in zip(idx, geoms, strict=False):
            if gi is None or gi.is_empty:
                continue
            by_pool[self.context.pools[j]].append((gi, self.context.props[j]))
        for p, lst in by_pool.items():
            counts[p] = len(lst)
        # water counts (and gets a legend entry) only where it shows: a few pixels inside the
        # view, not merely in the margin fetched for strokes crossing the edge
        view = box(x0, y0, x1, y1)
        counts["water"] = sum(1 for gi, _ in by_pool["water"] if gi.intersection(view).area >= 4.0)
        lw = px_to_pt
        # roads widen a little when zoomed in (large scale), thin out when zoomed out
        zoom = min(max(math.sqrt(0.3 / max(pt.ground_pixel_size(), 1e-6)), 0.75), 1.8)
        # water: the sea (derived from the coastline) under everything, lakes, rivers and
        # basins over land use (a pond in a park) but under buildings, roads and POIs
        water = st.get("water")
        if water is not None:
            for sea, z in ((True, zbase - 0.2), (False, zbase + 0.05)):
                polys = [
                    gi
                    for gi, pr in by_pool["water"]
                    if gi.geom_type in ("Polygon", "MultiPolygon") and (pr.get("water") == "sea") == sea
                ]
                paths = _poly_paths(polys)
                if paths:
                    ax.add_collection(
                        PathCollection(
                            paths,
                            facecolors=water["face"],
                            edgecolors=water["edge"],
                            linewidths=lw(water["width"]),
                            zorder=z,
                        )
                    )
        # land use / areas
        polys = [gi for gi, _ in by_pool["area"] if gi.geom_type in ("Polygon", "MultiPolygon")]
        paths = _poly_paths(polys)
        if paths:
            ax.add_collection(
                PathCollection(
                    paths,
                    facecolors=st["area"]["face"],
                    edgecolors=st["area"]["edge"],
                    linewidths=lw(st["area"]["width"]),
                    zorder=zbase,
                )
            )
        # buildings (and polygon POIs drawn as buildings would be confusing: POIs become dots)
        polys = [gi for gi, _ in by_pool["building"] if gi.geom_type in ("Polygon", "MultiPolygon")]
        paths = _poly_paths(polys)
        if paths:
            ax.add_collection(
                PathCollection(
                    paths,
                    facecolors=st["building"]["face"],
                    edgecolors=st["building"]["edge"],
                    linewidths=lw(st["building"]["width"]),
                    zorder=zbase + 0.1,
                )
            )
        # roads: casings of every class first, then fills, so junctions merge
        classes = st["road_classes"]
        path_cls = set(st["path"]["highways"])
        groups: list[list] = [[] for _ in classes]
        paths_lines = []
        for gi, pr in by_pool["road"]:
            hw = str(pr.get("highway", ""))
            if hw in path_cls:
                paths_lines.append(gi)
                continue
            for ci, c in enumerate(classes):
                if hw in c["highways"]:
                    groups[ci].append(gi)
                    break
            else:
                groups[-1].append(gi)
        if paths_lines:
            segs = _line_segments(paths_lines)
            lc = LineCollection(
                segs,
                colors=st["path"]["color"],
                linewidths=lw(st["path"]["width"]),
                linestyles=[(0, tuple(lw(v) / lw(st["path"]["width"]) for v in st["path"]["dash"]))],
                capstyle="butt",
                joinstyle="round",
                zorder=zbase + 0.2,
            )
            ax.add_collection(lc)
        for ci in reversed(range(len(classes))):
            if groups[ci]:
                segs = _line_segments(groups[ci])
                ax.add_collection(
                    LineCollection(
                        segs,
                        colors=st["road_casing"],
                        linewidths=lw(classes[ci]["width"] * zoom + 2.0),
                        capstyle="round",
                        joinstyle="round",
                        zorder=zbase + 0.3,
                    )
                )
        for ci in reversed(range(len(classes))):
            if groups[ci]:
                segs = _line_segments(groups[ci])
                ax.add_collection(
                    LineCollection(
                        segs,
                        colors=st["road_fill"],
                        linewidths=lw(classes[ci]["width"] * zoom),
                        capstyle="round",
                        joinstyle="round",
                        zorder=zbase + 0.4,
                    )
                )
        if by_pool["poi"]:
            xy = _points_xy([gi for gi, _ in by_pool["poi"]])
            ax.add_line(
                Line2D(
                    xy[:, 0],
                    xy[:, 1],
                    ls="none",
                    marker="o",
                    ms=px_to_pt(st["poi"]["size"]),
                    mfc=st["poi"]["face"],
                    mec=st["poi"]["edge"],
                    mew=px_to_pt(1.0),
                    zorder=zbase + 0.5,
                )
            )
        return counts

    # ---- task features ------------------------------------------------------------------------
    def draw_task(self, ax, geoms_by_fid: dict[str, Any], zbase=10.0):
        """Task features above the context. All white halos go below all coloured strokes and the
        stacking order depends only on geometry type and feature id, never on attributes (layer,
        bridge...): a road's halo must not cut another road like a bridge casing would, or a
        withheld `layer` would leak through the drawing."""
        t = self.style["task"]
        halo = t["halo_color"]
        lw = px_to_pt
        order = {
            "Polygon": 0,
            "MultiPolygon": 0,
            "LineString": 1,
            "MultiLineString": 1,
            "Point": 2,
            "MultiPoint": 2,
        }
        # the target's stroke is the widest and goes first in its class, so where another
        # feature coincides with it (equal / shared edges) a fringe of the target colour shows
        feats = sorted(
            self.features,
            key=lambda f: (order.get(geoms_by_fid[f.fid].geom_type, 3), not f.target, _fid_key(f.fid)),
        )
        for f in feats:
            g = geoms_by_fid[f.fid]
            gt = g.geom_type
            rank = order.get(gt, 3)
            z_halo = zbase + rank - 0.5 if rank == 0 else zbase + 0.5  # line/point halos under all strokes
            z = zbase + rank
            if gt in ("Polygon", "MultiPolygon"):
                path = _poly_path([g])
                if path is None:
                    continue
                ew = t["target_polygon_edge_width"] if f.target else t["polygon_edge_width"]
                alpha = t["polygon_alpha"].get(f.kind, 0.3)
                if f.kind in t.get("knockout_kinds", []):
                    # hide the context underneath (often the very same OSM object) for a clean fill
                    _add_patch(
                        ax,
                        PathPatch(
                            path, facecolor=self.style["background"], edgecolor="none", zorder=z_halo - 0.1
                        ),
                    )
                face = matplotlib.colors.to_rgba(f.color, alpha)
                _add_patch(
                    ax,
                    PathPatch(
                        path,
                        facecolor="none",
                        edgecolor=halo,
                        lw=lw(ew + 2 * t["halo_width"] - 1),
                        joinstyle="round",
                        zorder=z_halo,
                    ),
                )
                _add_patch(
                    ax,
                    PathPatch(
                        path, facecolor=face, edgecolor=f.color, lw=lw(ew), joinstyle="round", zorder=z
                    ),
                )
            elif gt in ("LineString", "MultiLineString"):
                w = t["target_line_width"] if f.target else t["line_width"]
                segs = _line_segments([g])
                ax.add_collection(
                    LineCollection(
                        segs,
                        colors=halo,
                        linewidths=lw(w + 2 * t["halo_width"]),
                        capstyle="round",
                        joinstyle="round",
                        zorder=z_halo,
                    )
                )
                ax.add_collection(
                    LineCollection(
                        segs, colors=f.color, linewidths=lw(w), capstyle="round", joinstyle="round", zorder=z
                    )
                )
            else:
                size = t["target_point_size"] if f.target else t["point_size"]
                xy = _points_xy([g])
                ax.add_line(
                    Line2D(
                        xy[:, 0],
                        xy[:, 1],
                        ls="none",
                        marker="o",
                        ms=px_to_pt(size),
                        mfc=f.color,
                        mec=halo,
                        mew=px_to_pt(3.0),
                        zorder=z,
                    )
                )
                ax.add_line(
                    Line2D(
                        xy[:, 0],
                        xy[:, 1],
                        ls="none",
                        marker="o",
                        ms=px_to_pt(3.5),
                        mfc="#ffffff",
                        mec="none",
                        zorder=z + 0.05,
                    )
                )
        if self.levels:
            # Whichever stroke is drawn last looks like the upper road. Where task roads cross,
            # a neutral disc covers both strokes, so only the cards (or nothing, when withheld)
            # tell the vertical order.
            xy = self.crossings(geoms_by_fid)
            if len(xy):
                cst = self.style["task"]["crossing"]
                ax.add_line(
                    Line2D(
                        xy[:, 0],
                        xy[:, 1],
                        ls="none",
                        marker="o",
                        ms=px_to_pt(cst["size"]),
                        mfc=cst["face"],
                        mec=cst["edge"],
                        mew=px_to_pt(cst["edge_width"]),
                        zorder=zbase + 1.5,
                    )
                )

    def crossings(self, geoms_by_fid: dict[str, Any]) -> np.ndarray:
        """Pixel points where two task lines cross (sorted, for determinism)."""
        lines = [
            geoms_by_fid[f.fid]
            for f in self.features
            if geoms_by_fid[f.fid].geom_type in ("LineString", "MultiLineString")
        ]
        pts = []
        for i, a in enumerate(lines):
            for b in lines[i + 1 :]:
                for part in shapely.get_parts(a.intersection(b)):
                    p = part if part.geom_type == "Point" else part.representative_point()
                    pts.append((round(p.x, 3), round(p.y, 3)))
        return np.array(sorted(set(pts)), dtype=float).reshape(-1, 2)

    # ---- labels -------------------------------------------------------------------------------
    def label_prop(self, f: TaskFeature):
        return font(self.style["labels"]["size_pt"], bold=True)

    def label_size(self, f: TaskFeature) -> tuple[float, float]:
        w, h = self.measure(f.fid, self.label_prop(f))
        pad = self.style["labels"]["pad_px"] + self.style["labels"]["border_px"]
        return w + 2 * pad + 2, h + 2 * pad - 2

    def draw_label(self, ax, f: TaskFeature, pl: Placement, zbase=40.0):
        ls = self.style["labels"]
        x0, y0, x1, y1 = pl.bbox
        bw = ls["border_px"]
        if pl.leader:
            (ax_, ay_), (bx_, by_) = pl.leader
            ax.add_line(
                Line2D(
                    [ax_, bx_],
                    [ay_, by_],
                    color="#ffffff",
                    lw=px_to_pt(ls["leader_width"] + 2.5),
                    solid_capstyle="round",
                    zorder=zbase - 31,
                )
            )
            ax.add_line(
                Line2D(
                    [ax_, bx_],
                    [ay_, by_],
                    color=ls["leader_color"],
                    lw=px_to_pt(ls["leader_width"]),
                    solid_capstyle="round",
                    zorder=zbase - 30.5,
                )
            )
        face = f.color if f.target else "#ffffff"
        ink = "#ffffff" if f.target else "#111111"
        _add_patch(
            ax,
            Rectangle(
                (x0 + bw / 2, y0 + bw / 2),
                (x1 - x0) - bw,
                (y1 - y0) - bw,
                facecolor=face,
                edgecolor=f.color,
                lw=px_to_pt(bw),
                joinstyle="miter",
                zorder=zbase,
            ),
        )
        self.text(
            ax,
            (x0 + x1) / 2,
            (y0 + y1) / 2,
            f.fid,
            self.label_prop(f),
            "label",
            color=ink,
            ha="center",
            va="center_baseline",
            zorder=zbase + 0.1,
        )

    # ---- furniture ----------------------------------------------------------------------------
    def panel(self, ax, bbox, z=50.0, edge=None):
        fs = self.style["furniture"]
        x0, y0, x1, y1 = bbox
        _add_patch(
            ax,
            Rectangle(
                (x0, y0),
                x1 - x0,
                y1 - y0,
                facecolor=matplotlib.colors.to_rgba(fs["panel_face"], fs["panel_alpha"]),
                edgecolor=edge or fs["panel_edge"],
                lw=px_to_pt(1.2),
                zorder=z,
            ),
        )

    def scalebar_layout(self, ground_px: float, max_px: float = 240.0):
        length = _nice_length(max_px * ground_px * 0.85)
        bar_px = length / ground_px
        while bar_px > max_px:
            length = _nice_length(length * 0.6)
            bar_px = length / ground_px
        lab = _fmt_length(length)
        prop = font(self.style["furniture"]["scalebar_size_pt"])
        tw, th = self.measure(lab, prop)
        w = bar_px + max(tw, 10) / 2 + 28
        h = th + 34
        return length, bar_px, lab, prop, (w, h)

    def draw_scalebar(self, ax, bbox, length, bar_px, lab, prop, z=50.0, role="scalebar"):
        fs = self.style["furniture"]
        self.panel(ax, bbox, z)
        x0, y0, x1, y1 = bbox
        bx, by = x0 + 12, y1 - 12
        seg = bar_px / 4
        for i in range(4):
            _add_patch(
                ax,
                Rectangle(
                    (bx + i * seg, by - 7),
                    seg,
                    7,
                    facecolor="#222222" if i % 2 == 0 else "#ffffff",
                    edgecolor="#222222",
                    lw=px_to_pt(1.2),
                    zorder=z + 1,
                ),
            )
        self.text(
            ax, bx, by - 12, "0", prop, role, color=fs["text"], ha="center", va="baseline", zorder=z + 2
        )
        self.text(
            ax,
            bx + bar_px,
            by - 12,
            lab,
            prop,
            role,
            color=fs["text"],
            ha="center",
            va="baseline",
            zorder=z + 2,
        )

    def draw_north(self, ax, bbox, z=50.0):
        x0, y0, x1, y1 = bbox
        cx = (x0 + x1) / 2
        self.panel(ax, bbox, z)
        top, bot = y0 + 30, y1 - 10
        mid = bot - 10
        _add_patch(
            ax,
            MplPolygon(
                [(cx, top), (cx - 13, bot), (cx, mid)],
                closed=True,
                facecolor="#222222",
                edgecolor="#222222",
                lw=px_to_pt(1.2),
                zorder=z + 1,
            ),
        )
        _add_patch(
            ax,
            MplPolygon(
                [(cx, top), (cx + 13, bot), (cx, mid)],
                closed=True,
                facecolor="#ffffff",
                edgecolor="#222222",
                lw=px_to_pt(1.2),
                zorder=z + 1,
            ),
        )
        self.text(
            ax,
            cx,
            y0 + 15,
            "N",
            font(13, bold=True),
            "north_arrow",
            color="#222222",
            ha="center",
            va="center_baseline",
            zorder=z + 2,
        )

    def legend_rows(self, counts):
        rows = [("header", "Task features", None)]
        for f in self.features:
            suffix = "  (edit target)" if (self.is_edit and f.target) else ""
            rows.append(("task", f"{f.fid}  {f.kind}{suffix}", f))
        if self.levels and len(self.crossings({f.fid: f.geom_px for f in self.features})):
            rows.append(("crossing", "crossing (level not drawn)", None))
        ctx = [
            ("road", "road"),
            ("building", "building"),
            ("area", "land use / area"),
            ("water", "water"),
            ("poi", "point of interest"),
        ]
        present = [(p, lab) for p, lab in ctx if counts.get(p)]
        if present:
            rows.append(("header", "OpenStreetMap context", None))
            rows.extend(("context", lab, p) for p, lab in present)
        return rows

    def legend_layout(self, rows, ncols: int = 1):
        """Size and row positions of the legend: each section header spans the panel, the
        section's entries fill `ncols` columns top to bottom (long scenes, e.g. M18 with 17
        features, would otherwise need a panel half the map tall)."""
        fs = self.style["furniture"]
        prop, hprop = font(fs["legend_size_pt"]), font(fs["legend_size_pt"], bold=True)
        row_h = 23.0
        entry_w = max([self.measure(t, prop)[0] for k, t, _ in rows if k != "header"] or [0.0])
        head_w = max([self.measure(t, hprop)[0] for k, t, _ in rows if k == "header"] or [0.0])
        col_w = 34 + 8 + entry_w + 18
        sections: list[list] = []
        for r in rows:
            if r[0] == "header" or not sections:
                sections.append([r])
            else:
                sections[-1].append(r)
        placed, line = [], 0
        for sec in sections:
            head, items = (sec[0], sec[1:]) if sec[0][0] == "header" else (None, sec)
            if head:
                placed.append((*head, 0.0, line))
                line += 1
            per = -(-len(items) // ncols) if items else 0
            for i, r in enumerate(items):
                placed.append((*r, (i // per) * col_w, line + i % per))
            line += per
        w = 14 + max(head_w, ncols * col_w - 18) + 14
        h = 12 + row_h * line + 8
        return (w, h), prop, hprop, row_h, placed

    def draw_legend(self, ax, bbox, placed, prop, hprop, row_h, z=50.0):
        t = self.style["task"]
        c = self.style["context"]
        self.panel(ax, bbox, z)
        x0, y0, _, _ = bbox
        for kind, label, obj, dx, line in placed:
            y = y0 + 12 + row_h / 2 + line * row_h
            sx = x0 + 14 + dx
            if kind == "header":
                self.text(
                    ax,
                    x0 + 12,
                    y,
                    label,
                    hprop,
                    "legend",
                    color="#222222",
                    va="center_baseline",
                    zorder=z + 2,
                )
                continue
            tx = sx + 42
            if kind == "crossing":
                cst = t["crossing"]
                ax.add_line(
                    Line2D(
                        [sx + 17],
                        [y],
                        ls="none",
                        marker="o",
                        ms=px_to_pt(cst["size"] - 2),
                        mfc=cst["face"],
                        mec=cst["edge"],
                        mew=px_to_pt(cst["edge_width"]),
                        zorder=z + 1,
                    )
                )
            elif kind == "task":
                f = obj
                gt = f.geom_px.geom_type
                if gt in ("Point", "MultiPoint"):
                    ax.add_line(
                        Line2D(
                            [sx + 17],
                            [y],
                            ls="none",
                            marker="o",
                            ms=px_to_pt(14),
                            mfc=f.color,
                            mec="#ffffff",
                            mew=px_to_pt(2),
                            zorder=z + 1,
                        )
                    )
                elif gt in ("LineString", "MultiLineString"):
                    ax.add_line(
                        Line2D(
                            [sx + 2, sx + 32],
                            [y, y],
                            color=f.color,
                            lw=px_to_pt(6 if not f.target else 8),
                            solid_capstyle="round",
                            zorder=z + 1,
                        )
                    )
                else:
                    _add_patch(
                        ax,
                        Rectangle(
                            (sx + 4, y - 8),
                            26,
                            16,
                            facecolor=matplotlib.colors.to_rgba(f.color, t["polygon_alpha"].get(f.kind, 0.3)),
                            edgecolor=f.color,
                            lw=px_to_pt(2.5),
                            zorder=z + 1,
                        ),
                    )
            else:
                p = obj
                if p == "road":
                    ax.add_line(
                        Line2D(
                            [sx + 2, sx + 32],
                            [y, y],
                            color=c["road_casing"],
                            lw=px_to_pt(10),
                            solid_capstyle="butt",
                            zorder=z + 1,
                        )
                    )
                    ax.add_line(
                        Line2D(
                            [sx + 2, sx + 32],
                            [y, y],
                            color=c["road_fill"],
                            lw=px_to_pt(7),
                            solid_capstyle="butt",
                            zorder=z + 1.1,
                        )
                    )
                elif p == "poi":
                    ax.add_line(
                        Line2D(
                            [sx + 17],
                            [y],
                            ls="none",
                            marker="o",
                            ms=px_to_pt(c["poi"]["size"] + 1),
                            mfc=c["poi"]["face"],
                            mec=c["poi"]["edge"],
                            zorder=z + 1,
                        )
                    )
                else:
                    edge = c[p]["edge"] if c[p]["edge"] != "none" else c[p]["face"]
                    _add_patch(
                        ax,
                        Rectangle(
                            (sx + 4, y - 8),
                            26,
                            16,
                            facecolor=c[p]["face"],
                            edgecolor=edge,
                            lw=px_to_pt(1.2),
                            zorder=z + 1,
                        ),
                    )
            self.text(ax, tx, y, label, prop, "legend", color="#222222", va="center_baseline", zorder=z + 2)

    def card_lines(self) -> list[tuple[TaskFeature, str]]:
        if not self.attributes:
            return []
        has = [f for f in self.features if any(a in f.props for a in self.attributes)]
        out = []
        for f in has or self.features:
            # "not set" is the questions' own wording for an absent attribute ("`layer` if set")
            vals = ", ".join(
                f"{a} {_fmt_value(f.props[a]) if a in f.props else 'not set'}" for a in self.attributes
            )
            out.append((f, f"{f.fid}: {vals}"))
        return out

    # ---- main ---------------------------------------------------------------------------------
    def render(self) -> tuple[bytes, dict[str, Any]]:
        self.prepare()
        st = self.style
        n = self.n
        ax = self.ax
        full = (0.0, 0.0, float(n), float(n))
        ground = self.pt.ground_pixel_size()
        clear = {f.fid: self.clearance(f) for f in self.features}
        obstacles = {f.fid: obstacle_for(f.geom_px, clear[f.fid]) for f in self.features}
        task_union = shapely.union_all(list(obstacles.values()))

        # fixed furniture: north arrow (top right), scale bar (bottom left), attribution (bottom right)
        north = (n - MARGIN - 46, MARGIN, n - MARGIN, MARGIN + 80)
        sb_len, sb_px, sb_lab, sb_prop, (sbw, sbh) = self.scalebar_layout(ground)
        scalebar = (MARGIN, n - MARGIN - sbh, MARGIN + sbw, n - MARGIN)
        a_prop = font(st["furniture"]["attribution_size_pt"])
        aw, ah = self.measure(ATTRIBUTION, a_prop)
        attribution = (n - 6 - aw - 12, n - 6 - ah - 8, n - 6, n - 6)
        blocked = [north, scalebar, attribution]

        # insets for task features too small to read
        insets = self.plan_insets(obstacles, blocked)
        for ins in insets:
            blocked.append(ins["bbox"])

        # legend and attribute cards
        counts = self.draw_context(ax, self.pt, full)
        rows = self.legend_rows(counts)
        self.legend_context = [obj for kind, _, obj in rows if kind == "context"]
        # one column unless that panel would hide task geometry and a wider, shorter one does not
        options = []
        for ncols in (1, 2, 3):
            if ncols > 1 and len(rows) < 10:
                break
            (lw_, lh_), lprop, lhprop, row_h, placed = self.legend_layout(rows, ncols)
            bb = place_box(
                (lw_, lh_), self.slots((lw_, lh_), north, scalebar, attribution), task_union, blocked, full
            )
            hidden = box(*bb).intersection(task_union).area + 10.0 * sum(
                box(*bb).intersection(box(*o)).area for o in blocked
            )
            options.append((hidden, ncols, bb, placed))
            if hidden == 0.0:
                break
        _, _, legend, placed = min(options, key=lambda o: (o[0], o[1]))
        blocked.append(legend)
        cards = []
        lines = self.card_lines()
        if lines:
            cprop = font(st["furniture"]["card_size_pt"])
            sizes = [self.measure(s, cprop) for _, s in lines]
            cw = max(w for w, _ in sizes) + 30
            ch_each = max(h for _, h in sizes) + 14
            gap = 6
            ch = len(lines) * ch_each + (len(lines) - 1) * gap
            panel = place_box(
                (cw, ch), self.slots((cw, ch), north, scalebar, attribution), task_union, blocked, full
            )
            blocked.append(panel)
            for i, (f, s) in enumerate(lines):
                y0 = panel[1] + i * (ch_each + gap)
                cards.append(
                    {
                        "feature": f.fid,
                        "text": s,
                        "bbox": (panel[0], y0, panel[2], y0 + ch_each),
                        "attributes": list(self.attributes),
                        "_f": f,
                    }
                )

        # frames of insets are obstacles for labels too (their outline only)
        label_obstacles = dict(obstacles)
        for ins in insets:
            label_obstacles["__frame_" + ins["id"]] = box(*ins["frame"]).boundary.buffer(3)
        items = [
            LabelItem(f.fid, f.geom_px, self.label_size(f), clear[f.fid])
            for f in sorted(self.features, key=lambda f: (not f.target, _fid_key(f.fid)))
        ]
        soft = {f.fid: f.geom_px for f in self.features if is_large_polygon(f.geom_px)}
        labels = place_labels(items, (6.0, 6.0, n - 6.0, n - 6.0), label_obstacles, blocked, soft)

        # ---- draw main map
        self.draw_task(ax, {f.fid: f.geom_px for f in self.features})
        for f in self.features:
            self.draw_label(ax, f, labels[f.fid])
        for ins in insets:
            fx0, fy0, fx1, fy1 = ins["frame"]
            _add_patch(
                ax,
                Rectangle(
                    (fx0, fy0),
                    fx1 - fx0,
                    fy1 - fy0,
                    facecolor="none",
                    edgecolor=st["insets"]["frame_color"],
                    lw=px_to_pt(1.6),
                    ls=(0, (3, 2)),
                    zorder=30,
                ),
            )
            self.text(
                ax,
                fx0,
                fy0 - 3,
                ins["id"],
                font(11, bold=True),
                "inset_frame",
                color="#222222",
                ha="left",
                va="bottom",
                zorder=30,
            )
        self.draw_north(ax, north)
        self.draw_scalebar(ax, scalebar, sb_len, sb_px, sb_lab, sb_prop)
        self.draw_legend(ax, legend, placed, lprop, lhprop, row_h)
        for c in cards:
            self.draw_card(ax, c)
        at = self.text(
            ax,
            attribution[2] - 6,
            (attribution[1] + attribution[3]) / 2,
            ATTRIBUTION,
            a_prop,
            "attribution",
            color="#333333",
            ha="right",
            va="center_baseline",
            zorder=60,
        )
        self.panel(ax, attribution, z=59)
        inset_records = [self.draw_inset(ins) for ins in insets]

        # ---- rasterise
        self.canvas.draw()
        at_bb = at.get_window_extent(self.renderer)
        buf = np.asarray(self.canvas.buffer_rgba())
        img = Image.fromarray(buf[:, :, :3].copy(), "RGB")
        out = io.BytesIO()
        img.save(out, format="PNG", compress_level=6, optimize=False)
        png = out.getvalue()

        record = self.record(
            labels,
            inset_records,
            cards,
            legend,
            north,
            scalebar,
            attribution,
            (sb_len, sb_px),
            at_bb,
            counts,
            ground,
        )
        return png, record

    def slots(self, size, north, scalebar, attribution):
        w, h = size
        n = self.n
        m = MARGIN
        return [
            (m, m),  # top left
            (n - m - w, north[3] + 8),  # top right, under the north arrow
            (m, scalebar[1] - 8 - h),  # bottom left, over the scale bar
            (n - m - w, attribution[1] - 8 - h),  # bottom right, over the attribution
            (n - m - w - north[2] + north[0] - 12, m),  # top right, left of the north arrow
            ((n - w) / 2, m),
            ((n - w) / 2, n - m - h),  # top / bottom middle
            (m, (n - h) / 2),
            (n - m - w, (n - h) / 2),  # left / right middle
        ]

    def draw_card(self, ax, c):
        f = c["_f"]
        x0, y0, x1, y1 = c["bbox"]
        self.panel(ax, c["bbox"], z=50, edge=f.color)
        _add_patch(ax, Rectangle((x0, y0), 8, y1 - y0, facecolor=f.color, edgecolor="none", zorder=51))
        self.text(
            ax,
            x0 + 18,
            (y0 + y1) / 2,
            c["text"],
            font(self.style["furniture"]["card_size_pt"]),
            "attribute_card",
            color="#111111",
            va="center_baseline",
            zorder=52,
        )

    # ---- insets -------------------------------------------------------------------------------
    def plan_insets(self, obstacles, blocked) -> list[dict[str, Any]]:
        ist = self.style["insets"]
        # what each inset must show, in pixels: a tiny feature itself; a crowded point together
        # with the nearest parts of its neighbours (an inset showing the point alone is useless)
        focus: dict[str, Any] = {}
        need: dict[str, float] = {}  # magnification each one needs to become readable
        for f in self.features:
            if f.geom_px.geom_type not in ("Point", "MultiPoint"):
                ext = self.pixel_extent(f)
                if ext < ist["min_feature_px"]:
                    focus[f.fid] = f.geom_px
                    need[f.fid] = min(max(ist["readable_px"] / max(ext, 1.0), 3.0), 20.0)
            else:
                near = self.crowding(f)
                if near:
                    focus[f.fid] = shapely.union_all([f.geom_px, *near])
                    need[f.fid] = 3.0
        if not focus:
            return []
        small = [f for f in self.features if f.fid in focus]
        # group small features lying close together (single-linkage, 80 px), but only as long as
        # the largest inset can still give every member the magnification it needs (Kibera T08:
        # three 5-px buildings 60 px apart shared one x2 inset in which they stayed unreadable)
        fill, biggest = ist["fill_fraction"], float(ist["max_size_px"])

        def extent(fs):
            b = shapely.union_all([focus[o.fid] for o in fs]).bounds
            return max(b[2] - b[0], b[3] - b[1], 1.0)

        groups: list[list[TaskFeature]] = []
        for f in small:
            for gr in groups:
                if any(focus[f.fid].distance(focus[o.fid]) < 80 for o in gr) and biggest * fill / extent(
                    gr + [f]
                ) >= max(need[o.fid] for o in gr + [f]):
                    gr.append(f)
                    break
            else:
                groups.append([f])
        groups = groups[:3]
        n = self.n
        out = []
        task_union = shapely.union_all(list(obstacles.values()))
        res = self.pt.resolution
        for k, gr in enumerate(groups):
            pminx, pminy, pmaxx, pmaxy = shapely.union_all([focus[f.fid] for f in gr]).bounds
            # a wide cluster (a dozen POIs along an edge, Kibera M18) needs a bigger inset to
            # leave room at the magnification its members need; but an inset must not hide task
            # geometry, so the size shrinks (below the default if need be) until one fits
            ext = max(pmaxx - pminx, pmaxy - pminy)
            mag = max(need[f.fid] for f in gr)
            want = float(min(max(ist["size_px"], mag * ext / fill), ist["max_size_px"]))
            base = float(ist["size_px"])
            sizes = ([want, (want + base) / 2] if want > base else []) + [base, 0.8 * base, 0.65 * base]
            pcx, pcy = (pminx + pmaxx) / 2, (pminy + pmaxy) / 2
            cx, cy = (float(v) for v in self.pt.pixel_to_3857(pcx, pcy))
            tries = []
            for size in sizes:
                side = ext * res / ist["fill_fraction"]
                side = max(side, ist["min_side_m"] / _ground_per_3857(cx, cy))
                side = min(side, res * size * 0.5)  # an inset must magnify at least 2x
                half = side / res / 2
                frame = (pcx - half, pcy - half, pcx + half, pcy + half)
                bb = place_box(
                    (size, size),
                    self.inset_slots(size),
                    task_union,
                    blocked + [frame],
                    (0.0, 0.0, float(n), float(n)),
                    near=(pcx, pcy),
                )
                hidden = box(*bb).intersection(task_union).area
                hidden += 10.0 * sum(box(*bb).intersection(box(*o)).area for o in blocked + [frame])
                tries.append((hidden, size, side, frame, bb))
                if hidden == 0.0:
                    break
            _, size, side, frame, bb = min(tries, key=lambda t: (t[0], t[1]))
            blocked = blocked + [bb]
            ipt = PixelTransform.from_view(
                cx - side / 2, cy + side / 2, side / size, n, n, self.task_epsg, col0=bb[0], row0=bb[1]
            )
            out.append(
                {
                    "id": "ABC"[k],
                    "bbox": bb,
                    "frame": frame,
                    "features": [f.fid for f in gr],
                    "pt": ipt,
                    "magnification": res / ipt.resolution,
                }
            )
        return out

    def crowding(self, f: TaskFeature) -> list:
        """For a point whose marker merges with another task point, or sits on another feature's
        stroke or outline (inside or outside?), the nearest points of those neighbours; else []."""
        if f.geom_px.geom_type not in ("Point", "MultiPoint"):
            return []
        t = self.style["task"]
        r = (t["target_point_size"] if f.target else t["point_size"]) / 2.0
        near = []
        for o in self.features:
            if o is f:
                continue
            og = o.geom_px
            if og.geom_type in ("Point", "MultiPoint"):
                ro = (t["target_point_size"] if o.target else t["point_size"]) / 2.0
                gap = r + ro + 4.0
            else:
                if og.geom_type in ("Polygon", "MultiPolygon"):
                    og = og.boundary
                gap = r + self.clearance(o) + 1.0
            if f.geom_px.distance(og) < gap:
                near.append(shapely.ops.nearest_points(f.geom_px, og)[1])
        return near

    def inset_slots(self, size):
        n, m = self.n, MARGIN
        lo_x, hi_x = m, n - m - size
        lo_y, hi_y = m + 60, n - m - size - 40  # clear of the top and bottom furniture rows
        mid_x, mid_y = (n - size) / 2, (n - size) / 2
        q = [
            (lo_x, lo_y),
            (hi_x, m + 96),
            (lo_x, hi_y - 30),
            (hi_x, hi_y),
            (mid_x, m),
            (mid_x, hi_y),
            (lo_x, mid_y),
            (hi_x, mid_y),
        ]
        # then quarter points along each edge, for large insets on crowded maps
        for t in (0.25, 0.75):
            x = lo_x + t * (hi_x - lo_x)
            y = lo_y + t * (hi_y - lo_y)
            q += [(x, m), (x, hi_y), (lo_x, y), (hi_x, y)]
        return q

    def draw_inset(self, ins) -> dict[str, Any]:
        st = self.style
        bb = ins["bbox"]
        ipt: PixelTransform = ins["pt"]
        ax = self._axes(bb, zorder=5)
        _add_patch(
            ax,
            Rectangle(
                (bb[0], bb[1]),
                bb[2] - bb[0],
                bb[3] - bb[1],
                facecolor=st["background"],
                edgecolor="none",
                zorder=0,
            ),
        )
        self.draw_context(ax, ipt, bb)
        geoms = {f.fid: ipt.geometry_3857_to_pixel(f.geom_3857) for f in self.features}
        self.draw_task(ax, geoms)
        inner = (bb[0] + 8, bb[1] + 40, bb[2] - 8, bb[3] - 8)
        vis = [f for f in self.features if geoms[f.fid].intersects(box(*inner))]
        saved = {f.fid: f.geom_px for f in vis}
        try:
            for f in vis:  # label sizes and clearances use geom_px
                f.geom_px = shapely.clip_by_rect(geoms[f.fid], *bb)
            clear = {f.fid: self.clearance(f) for f in vis}
            obst = {f.fid: obstacle_for(f.geom_px, clear[f.fid]) for f in vis}
            title = (bb[0], bb[1], bb[0] + 120, bb[1] + 34)
            items = [
                LabelItem(f.fid, f.geom_px, self.label_size(f), clear[f.fid])
                for f in sorted(vis, key=lambda f: (not f.target, _fid_key(f.fid)))
            ]
            soft = {f.fid: f.geom_px for f in vis if is_large_polygon(f.geom_px)}
            labels = place_labels(items, inner, obst, [title], soft)
            for f in vis:
                self.draw_label(ax, f, labels[f.fid], zbase=40)
        finally:
            for f in vis:
                f.geom_px = saved[f.fid]
        # title + frame
        mag = ins["magnification"]
        self.panel(ax, (bb[0], bb[1], bb[0] + 120, bb[1] + 34), z=50)
        self.text(
            ax,
            bb[0] + 10,
            bb[1] + 17,
            f"{ins['id']}  ×{mag:.0f}",
            font(12, bold=True),
            "inset_title",
            color="#222222",
            va="center_baseline",
            zorder=51,
        )
        sb_len, sb_px, sb_lab, sb_prop, (sbw, sbh) = self.scalebar_layout(
            ipt.ground_pixel_size((bb[0] + bb[2]) / 2, (bb[1] + bb[3]) / 2), max_px=110
        )
        sbb = (bb[0] + 8, bb[3] - 8 - sbh, bb[0] + 8 + sbw, bb[3] - 8)
        self.draw_scalebar(ax, sbb, sb_len, sb_px, sb_lab, sb_prop, z=50, role="inset_scalebar")
        _add_patch(
            ax,
            Rectangle(
                (bb[0] + 1, bb[1] + 1),
                bb[2] - bb[0] - 2,
                bb[3] - bb[1] - 2,
                facecolor="none",
                edgecolor=st["insets"]["frame_color"],
                lw=px_to_pt(2.0),
                zorder=60,
            ),
        )
        return {
            "id": ins["id"],
            "bbox": [round(v, 2) for v in bb],
            "source_frame": [round(v, 2) for v in ins["frame"]],
            "features": ins["features"],
            "magnification": round(mag, 4),
            "geotransform": list(ipt.geotransform),
            "ground_pixel_size_m": round(ipt.ground_pixel_size((bb[0] + bb[2]) / 2, (bb[1] + bb[3]) / 2), 6),
            "scalebar_m": sb_len,
            "labels": {k: v.to_json() for k, v in labels.items()},
        }

    # ---- sidecar ------------------------------------------------------------------------------
    def record(self, labels, insets, cards, legend, north, scalebar, attribution, sb, at_bb, counts, ground):
        n = self.n
        cx, cy = self.pt.pixel_to_3857(n / 2, n / 2)
        lon, lat = m3857_to_lonlat(cx, cy)
        # grid convergence: angle from true north (map up) to the task CRS's grid north
        try:
            conv = grid_convergence_at(self.task_epsg, float(lon), float(lat))
        except Exception:  # noqa: BLE001 - informative only
            conv = float("nan")
        x0, y1 = self.pt.pixel_to_3857(0, 0)
        x1, y0 = self.pt.pixel_to_3857(n, n)
        feats = {}
        for f in self.features:
            b = f.geom_px.bounds
            feats[f.fid] = {
                "kind": f.kind,
                "geometry_type": f.geom_task.geom_type,
                "color": f.color,
                "target": f.target,
                "pixel_bbox": [round(v, 2) for v in b],
                "in_inset": next((i["id"] for i in insets if f.fid in i["features"]), None),
            }
        return {
            "schema": SIDECAR_SCHEMA,
            "id": self.iid,
            "renderer": {
                "name": "spatialgap-matplotlib",
                "version": RENDERER_VERSION,
                "matplotlib": matplotlib.__version__,
                "pillow": PIL.__version__,
                "pyproj": pyproj.__version__,
                "proj": pyproj.proj_version_str,
                "shapely": shapely.__version__,
            },
            "image": {"file": f"{self.iid}.png", "width": n, "height": n, "dpi": DPI},
            "crs": {
                "map": "EPSG:3857",
                "map_epsg": 3857,
                "task_epsg": self.task_epsg,
                "task": f"EPSG:{self.task_epsg}",
            },
            "pixel_convention": (
                "corner: (col, row) = (0, 0) is the top-left corner of the top-left pixel; "
                "pixel (i, j) covers [i, i+1) x [j, j+1), its centre is (i+0.5, j+0.5); "
                "rows grow downwards (same as GDAL's geotransform)"
            ),
            "transform": {
                **self.pt.to_json(),
                "formula": "X = gt[0] + col*gt[1] + row*gt[2]; Y = gt[3] + col*gt[4] + row*gt[5] (EPSG:3857)",
                "pixel_to_task": "pixel -> EPSG:3857 (affine) -> EPSG:4326 -> task EPSG (pyproj, always_xy)",
                "task_to_pixel": "task EPSG -> EPSG:4326 -> EPSG:3857 (pyproj, always_xy) -> pixel (inverse affine)",
                "python": "scoring.render.transform.PixelTransform.from_sidecar(path)",
            },
            "view": {
                "bounds_3857": [x0, float(y0), float(x1), float(y1)],
                "center_lonlat": [round(float(lon), 8), round(float(lat), 8)],
                "resolution_3857_m": self.pt.resolution,
                "ground_pixel_size_m": round(ground, 6),
                "ground_width_m": round(ground * n, 3),
                "grid_convergence_deg": round(conv, 4),
                "north": "up (true north; Web Mercator)",
            },
            "features": feats,
            "labels": {k: {**v.to_json(), "text": k} for k, v in labels.items()},
            "insets": insets,
            "attribute_cards": [
                {
                    "feature": c["feature"],
                    "text": c["text"],
                    "attributes": c["attributes"],
                    "bbox": [round(v, 2) for v in c["bbox"]],
                }
                for c in cards
            ],
            "information": {"attributes_shown": self.attributes, "withheld": self.withheld},
            "legend": {
                "bbox": [round(v, 2) for v in legend],
                "context": list(getattr(self, "legend_context", [])),
            },
            "north_arrow": {"bbox": [round(v, 2) for v in north]},
            "scalebar": {
                "bbox": [round(v, 2) for v in scalebar],
                "length_m": sb[0],
                "length_px": round(sb[1], 3),
            },
            "attribution": {
                "text": ATTRIBUTION,
                "drawn": True,
                "bbox": [round(v, 2) for v in attribution],
                "text_bbox": [
                    round(at_bb.x0, 2),
                    round(n - at_bb.y1, 2),
                    round(at_bb.x1, 2),
                    round(n - at_bb.y0, 2),
                ],
            },
            "crossings": [
                [round(float(x), 2), round(float(y), 2)]
                for x, y in (self.crossings({f.fid: f.geom_px for f in self.features}) if self.levels else [])
            ],
            "context_counts": counts,
            "texts": self.texts,
        }


def _add_patch(ax, patch):
    """ax.add_patch without its data-limit update (the axes limits are fixed: autoscale is
    off), which costs more than drawing the patch."""
    return ax.add_artist(patch)


def _fid_key(fid: str):
    m = re.match(r"^([A-Za-z]*)(\d+)$", fid)
    return (m.group(1), int(m.group(2)), "") if m else (fid, 0, fid)


# ----------------------------------------------------------------------------------------------
# public entry points
# ----------------------------------------------------------------------------------------------
def render_map(
    instance: dict[str, Any], context_index: ContextIndex | None, style: dict[str, Any] | None = None
) -> tuple[bytes, dict[str, Any]]:
    """(PNG bytes, sidecar record) for one instance; touches no files."""
    style = style or load_style()
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(PINNED_RC)
        m = _Map(instance, context_index, style)
        try:
            return m.render()
        finally:
            if getattr(m, "fig", None) is not None:
                m.fig.clear()


def world_file(gt) -> str:
    """ESRI world file (pixel CENTRE of the top-left pixel)."""
    a, b, c = gt[1], gt[4], gt[2]
    d = gt[5]
    x = gt[0] + gt[1] / 2 + gt[2] / 2
    y = gt[3] + gt[4] / 2 + gt[5] / 2
    return "".join(f"{v!r}\n" for v in (a, b, c, d, x, y))


def aux_xml(gt) -> str:
    wkt = pyproj.CRS.from_epsg(3857).to_wkt(version="WKT1_GDAL")
    wkt = wkt.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    g = ", ".join(f"{v!r}" for v in gt)
    return (
        "<PAMDataset>\n"
        f'  <SRS dataAxisToSRSAxisMapping="1,2">{wkt}</SRS>\n'
        f"  <GeoTransform>{g}</GeoTransform>\n"
        "</PAMDataset>\n"
    )


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same directory, fsync, then rename over `path`."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def render_instance(
    instance: dict[str, Any],
    context_index: ContextIndex | None,
    out_dir: str | Path,
    style: dict[str, Any] | None = None,
) -> dict[str, Path]:
    """Render one instance into out_dir: <id>.png, <id>.json (sidecar), <id>.pgw, <id>.png.aux.xml.

    Pure function of (instance, context, style, renderer version): same inputs -> same bytes.
    The PNG is written last, so a complete PNG implies complete companions."""
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {out_dir}: {exc.strerror}") from None
    png, record = render_map(instance, context_index, style)
    iid = record["id"]
    gt = record["transform"]["geotransform"]
    paths = {
        "png": out_dir / f"{iid}.png",
        "sidecar": out_dir / f"{iid}.json",
        "world": out_dir / f"{iid}.pgw",
        "aux": out_dir / f"{iid}.png.aux.xml",
    }
    try:
        atomic_write(
            paths["sidecar"], (json.dumps(record, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
        )
        atomic_write(paths["world"], world_file(gt).encode("ascii"))
        atomic_write(paths["aux"], aux_xml(gt).encode("utf-8"))
        atomic_write(paths["png"], png)
    except OSError as exc:
        raise OutputError(f"cannot write map {iid} into {out_dir}: {exc.strerror}") from None
    return paths
