"""What a map's companions record: the sidecar JSON (transforms, drawn boxes, texts), the ESRI world
file and the GDAL .aux.xml that let QGIS or GDAL place the PNG."""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import matplotlib
import PIL
import pyproj
import shapely

from scoring.errors import OutputError
from scoring.geometry.georef import PixelTransform, grid_convergence_at, m3857_to_lonlat
from scoring.render.backend.png import PNG_DEFLATE
from scoring.render.features import MapSubject, geom_type
from scoring.render.furniture.panels import ATTRIBUTION, AttributeCard, ScaleBar
from scoring.render.labels.placement import Box, Placement
from scoring.render.layers import crossings
from scoring.render.sidecar.encoder import dumps_indent1
from scoring.render.style import DPI
from scoring.render.version import RENDERER_VERSION, SIDECAR_SCHEMA


def sidecar_record(
    subject: MapSubject,
    pt: PixelTransform,
    n: int,
    *,
    labels: dict[str, Placement],
    insets: list[dict[str, Any]],
    cards: list[AttributeCard],
    legend: Box,
    legend_context: list[str],
    north: Box,
    scalebar: Box,
    bar: ScaleBar,
    attribution: Box,
    attribution_text_bbox,
    counts: dict[str, int],
    ground: float,
    texts: list[dict[str, Any]],
) -> dict[str, Any]:
    """The map's sidecar: image, CRS and exact transforms, and where everything was drawn."""
    return {
        "schema": SIDECAR_SCHEMA,
        "id": subject.iid,
        "renderer": _renderer_versions(),
        "image": {"file": f"{subject.iid}.png", "width": n, "height": n, "dpi": DPI},
        "crs": {
            "map": "EPSG:3857",
            "map_epsg": 3857,
            "task_epsg": subject.task_epsg,
            "task": f"EPSG:{subject.task_epsg}",
        },
        "pixel_convention": (
            "corner: (col, row) = (0, 0) is the top-left corner of the top-left pixel; "
            "pixel (i, j) covers [i, i+1) x [j, j+1), its centre is (i+0.5, j+0.5); "
            "rows grow downwards (same as GDAL's geotransform)"
        ),
        "transform": _transform_record(pt),
        "view": _view_record(subject, pt, n, ground),
        "features": _feature_records(subject, insets),
        "labels": {k: {**v.to_json(), "text": k} for k, v in labels.items()},
        "insets": insets,
        "attribute_cards": [c.to_json() for c in cards],
        "information": {"attributes_shown": subject.attributes, "withheld": subject.withheld},
        "legend": {
            "bbox": [round(v, 2) for v in legend],
            "context": list(legend_context),
        },
        "north_arrow": {"bbox": [round(v, 2) for v in north]},
        "scalebar": {
            "bbox": [round(v, 2) for v in scalebar],
            "length_m": bar.length_m,
            "length_px": round(bar.length_px, 3),
        },
        "attribution": _attribution_record(attribution, attribution_text_bbox, n),
        "crossings": _crossing_points(subject),
        "context_counts": counts,
        "texts": texts,
    }


def _renderer_versions() -> dict[str, Any]:
    """The renderer and the versions of the libraries that decide the map's bytes."""
    return {
        "name": "spatialgap-matplotlib",
        "version": RENDERER_VERSION,
        "matplotlib": matplotlib.__version__,
        "pillow": PIL.__version__,
        "png_deflate": PNG_DEFLATE,
        "pyproj": pyproj.__version__,
        "proj": pyproj.proj_version_str,
        "shapely": shapely.__version__,
    }


def _transform_record(pt: PixelTransform) -> dict[str, Any]:
    """The exact pixel <-> EPSG:3857 affine, and how to get to the task CRS from it."""
    return {
        **pt.to_json(),
        "formula": "X = gt[0] + col*gt[1] + row*gt[2]; Y = gt[3] + col*gt[4] + row*gt[5] (EPSG:3857)",
        "pixel_to_task": "pixel -> EPSG:3857 (affine) -> EPSG:4326 -> task EPSG (pyproj, always_xy)",
        "task_to_pixel": (
            "task EPSG -> EPSG:4326 -> EPSG:3857 (pyproj, always_xy) -> pixel (inverse affine)"
        ),
        "python": "scoring.geometry.georef.PixelTransform.from_sidecar(path)",
    }


def _view_record(subject: MapSubject, pt: PixelTransform, n: int, ground: float) -> dict[str, Any]:
    """What the map shows: its bounds, centre, scale and where north is."""
    cx, cy = pt.pixel_to_3857(n / 2, n / 2)
    lon, lat = m3857_to_lonlat(cx, cy)
    # grid convergence: angle from true north (map up) to the task CRS's grid north
    try:
        conv = grid_convergence_at(subject.task_epsg, float(lon), float(lat))
    except Exception:  # noqa: BLE001 - informative only
        conv = float("nan")
    x0, y1 = pt.pixel_to_3857(0, 0)
    x1, y0 = pt.pixel_to_3857(n, n)
    return {
        "bounds_3857": [x0, float(y0), float(x1), float(y1)],
        "center_lonlat": [round(float(lon), 8), round(float(lat), 8)],
        "resolution_3857_m": pt.resolution,
        "ground_pixel_size_m": round(ground, 6),
        "ground_width_m": round(ground * n, 3),
        "grid_convergence_deg": round(conv, 4),
        "north": "up (true north; Web Mercator)",
    }


def _feature_records(subject: MapSubject, insets: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each task feature as drawn: its style, pixel bbox and the inset showing it, if any."""
    feats = {}
    for f in subject.features:
        b = f.geom_px.bounds
        feats[f.fid] = {
            "kind": f.kind,
            "geometry_type": geom_type(f.geom_task),
            "color": f.color,
            "target": f.target,
            "pixel_bbox": [round(v, 2) for v in b],
            "in_inset": next((i["id"] for i in insets if f.fid in i["features"]), None),
        }
    return feats


def _attribution_record(attribution: Box, text_bbox: Any, n: int) -> dict[str, Any]:
    """The attribution's panel and the box of its text (`text_bbox`: matplotlib's, y up)."""
    return {
        "text": ATTRIBUTION,
        "drawn": True,
        "bbox": [round(v, 2) for v in attribution],
        "text_bbox": [
            round(text_bbox.x0, 2),
            round(n - text_bbox.y1, 2),
            round(text_bbox.x1, 2),
            round(n - text_bbox.y0, 2),
        ],
    }


def _crossing_points(subject: MapSubject) -> list[list[float]]:
    """Where task roads cross, drawn as neutral discs (only when levels are part of the task)."""
    return [
        [round(float(x), 2), round(float(y), 2)]
        for x, y in (
            crossings(subject.features, {f.fid: f.geom_px for f in subject.features})
            if subject.levels
            else []
        )
    ]


def world_file(gt) -> str:
    """ESRI world file (pixel CENTRE of the top-left pixel)."""
    a, b, c = gt[1], gt[4], gt[2]
    d = gt[5]
    x = gt[0] + gt[1] / 2 + gt[2] / 2
    y = gt[3] + gt[4] / 2 + gt[5] / 2
    return "".join(f"{v!r}\n" for v in (a, b, c, d, x, y))


@lru_cache(maxsize=1)
def _wkt_3857() -> str:
    """EPSG:3857 as escaped WKT1 (the same text map after map; PROJ builds it in ~0.2 ms)."""
    wkt = pyproj.CRS.from_epsg(3857).to_wkt(version="WKT1_GDAL")
    return wkt.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def aux_xml(gt) -> str:
    wkt = _wkt_3857()
    g = ", ".join(f"{v!r}" for v in gt)
    return (
        "<PAMDataset>\n"
        f'  <SRS dataAxisToSRSAxisMapping="1,2">{wkt}</SRS>\n'
        f"  <GeoTransform>{g}</GeoTransform>\n"
        "</PAMDataset>\n"
    )


def write_map_files(out_dir: Path, png: bytes, record: dict[str, Any]) -> dict[str, Path]:
    """<id>.png, <id>.json (sidecar), <id>.pgw, <id>.png.aux.xml in out_dir. The PNG is written
    last, so a complete PNG implies complete companions."""
    iid = record["id"]
    gt = record["transform"]["geotransform"]
    paths = {
        "png": out_dir / f"{iid}.png",
        "sidecar": out_dir / f"{iid}.json",
        "world": out_dir / f"{iid}.pgw",
        "aux": out_dir / f"{iid}.png.aux.xml",
    }
    try:
        # not write_json_atomic: a NaN grid convergence is written as NaN, as it always was;
        # json.dumps(record, indent=1, ensure_ascii=False), NaN written as NaN as it always was
        _write_durably(paths["sidecar"], (dumps_indent1(record) + "\n").encode())
        _write_durably(paths["world"], world_file(gt).encode("ascii"))
        _write_durably(paths["aux"], aux_xml(gt).encode())
        _write_durably(paths["png"], png)
    except OSError as exc:
        raise OutputError(f"cannot write map {iid} into {out_dir}: {exc.strerror}") from None
    return paths


def _write_durably(path: Path, data: bytes) -> None:
    """scoring.support.files.write_atomic with fewer system calls (the parent writes 4 files a map): a
    temporary beside `path` named by process and thread (the QGIS plugin renders in a thread),
    created with mode 0o666 so the umask applies as to any new file (no chmod, no umask lookup),
    fsynced, then renamed over `path`. A reader never sees half a file; after a crash, a file is
    either whole or absent (the PNG, written last, vouches for its companions)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o666)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
