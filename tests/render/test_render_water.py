"""Water in the OSM context: the sea (derived from the coastline) and lakes are drawn in the
style's muted blue, under buildings and roads, and the legend names "water" only when some
is in view."""

import io

import numpy as np
from PIL import Image
from render_synthetic import CRS, X0, Y0, make_context

from scoring.geometry.georef import PixelTransform
from scoring.render import ContextIndex, render_map
from scoring.render.style import load_style

EPSG = 32635


def _poly(x0, y0, x1, y1):
    return {"type": "Polygon", "coordinates": [[[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]]}


def _context():
    """The synthetic street grid plus a sea east of x = X0 + 700 (with one pier building on
    it) and a pond in the west."""
    feats = make_context()
    feats.insert(
        0,
        {
            "type": "Feature",
            "geometry": _poly(X0 + 700, Y0 - 700, X0 + 1500, Y0 + 700),
            "properties": {
                "pool": "water",
                "osm_id": "sea/0",
                "water": "sea",
                "derived_from": "natural=coastline",
            },
        },
    )
    feats.insert(
        1,
        {
            "type": "Feature",
            "geometry": _poly(X0 - 640, Y0 - 40, X0 - 600, Y0 + 40),
            "properties": {"pool": "water", "osm_id": "way/9", "natural": "water"},
        },
    )
    feats.append(
        {
            "type": "Feature",
            "geometry": _poly(X0 + 760, Y0 + 100, X0 + 790, Y0 + 130),
            "properties": {"pool": "building", "osm_id": "way/10", "building": "yes"},
        }
    )
    return ContextIndex.from_features(feats, EPSG)


def _inst(iid, x, y):
    pts = [(x, y), (x + 40, y + 30)]
    return {
        "id": iid,
        "city": "helsinki",
        "task": "qa",
        "relation": "M01",
        "family": "metric",
        "scene": {
            "type": "FeatureCollection",
            "crs": CRS,
            "features": [
                {
                    "type": "Feature",
                    "id": f"F{k}",
                    "geometry": {"type": "Point", "coordinates": [px, py]},
                    "properties": {"id": f"F{k}", "kind": "poi"},
                }
                for k, (px, py) in enumerate(pts)
            ],
        },
        "information": {"attributes": [], "withheld": []},
    }


def _rgb(hexcol):
    return np.array([int(hexcol[i : i + 2], 16) for i in (1, 3, 5)])


def _legend_texts(rec):
    return [t["text"] for t in rec["texts"] if t["role"] == "legend"]


def test_sea_in_view_is_drawn_blue_under_buildings_with_a_legend_entry():
    st = load_style()
    ctx = _context()
    png, rec = render_map(_inst("helsinki-qa-M01-090", X0 + 720, Y0 + 80), ctx)
    assert rec["context_counts"]["water"] >= 1
    assert "water" in _legend_texts(rec)
    assert "water" in rec["legend"]["context"]
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    pt = PixelTransform.from_sidecar(rec)
    water = _rgb(st["context"]["water"]["face"])
    # open sea east of the scene, clear of task features, labels and furniture
    c, r = pt.task_to_pixel(np.array([X0 + 740.0]), np.array([Y0 + 20.0]))
    assert np.all(np.abs(img[int(r[0]), int(c[0])] - water) <= 2)
    # the pier building is drawn over the sea
    c, r = pt.task_to_pixel(np.array([X0 + 775.0]), np.array([Y0 + 115.0]))
    assert np.all(np.abs(img[int(r[0]), int(c[0])] - _rgb(st["context"]["building"]["face"])) <= 2)
    # land west of the coast is not water
    c, r = pt.task_to_pixel(np.array([X0 + 675.0]), np.array([Y0 + 60.0]))
    assert np.any(np.abs(img[int(r[0]), int(c[0])] - water) > 6)


def test_no_water_legend_entry_without_water_in_view():
    ctx = _context()
    _, rec = render_map(_inst("helsinki-qa-M01-091", X0 - 100, Y0 - 100), ctx)
    assert rec["context_counts"]["water"] == 0
    assert "water" not in _legend_texts(rec)
    assert "water" not in rec["legend"]["context"] and "road" in rec["legend"]["context"]


def test_a_pond_in_a_park_shows_above_the_land_use():
    """Inland water goes over land use (a pond in a park would otherwise vanish) and the map
    with water renders to the same bytes twice."""
    st = load_style()
    feats = [
        {
            "type": "Feature",
            "geometry": _poly(X0 - 300, Y0 - 300, X0 + 300, Y0 + 300),
            "properties": {"pool": "area", "osm_id": "way/1", "leisure": "park"},
        },
        {
            "type": "Feature",
            "geometry": _poly(X0 - 60, Y0 - 60, X0 + 60, Y0 + 60),
            "properties": {"pool": "water", "osm_id": "way/2", "natural": "water"},
        },
    ]
    ctx = ContextIndex.from_features(feats, EPSG)
    inst = _inst("helsinki-qa-M01-092", X0 + 20, Y0 + 20)
    png, rec = render_map(inst, ctx)
    assert render_map(inst, ctx)[0] == png
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    pt = PixelTransform.from_sidecar(rec)
    c, r = pt.task_to_pixel(np.array([X0 - 10.0]), np.array([Y0 + 40.0]))
    assert np.all(np.abs(img[int(r[0]), int(c[0])] - _rgb(st["context"]["water"]["face"])) <= 2)
    assert "water" in _legend_texts(rec)
