"""What the visual review of real-city maps found and fixed: colour distinctness, insets for
crowded points, coincident outlines, card wording, the scale bar's true ground length."""

import json

import numpy as np
import pytest
import shapely
from PIL import Image
from pyproj import Geod
from render_synthetic import CRS, X0, Y0
from shapely.geometry import box, shape

from scoring.geometry.georef import PixelTransform
from scoring.render import ContextIndex, render_map
from scoring.render.style import load_style


def _ctx(bench):
    return ContextIndex.from_file(bench / "context.geojsonl", 32635)


def _inst(iid, feats, attributes=(), withheld=()):
    return {
        "id": iid,
        "city": "helsinki",
        "task": "qa",
        "relation": "M18",
        "family": "metric",
        "scene": {
            "type": "FeatureCollection",
            "crs": CRS,
            "features": [
                {
                    "type": "Feature",
                    "id": fid,
                    "geometry": g,
                    "properties": {"id": fid, "kind": kind, **props},
                }
                for fid, kind, g, props in feats
            ],
        },
        "information": {"attributes": list(attributes), "withheld": list(withheld)},
    }


def _pt(x, y):
    return {"type": "Point", "coordinates": [X0 + x, Y0 + y]}


def _rect(x, y, w, h):
    x, y = X0 + x, Y0 + y
    return {"type": "Polygon", "coordinates": [[[x, y], [x + w, y], [x + w, y + h], [x, y + h], [x, y]]]}


def _srgb_to_lab(hexcol):
    c = np.array([int(hexcol[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    c = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ c
    f = np.cbrt(xyz / np.array([0.95047, 1.0, 1.08883]))
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_task_colours_are_mutually_distinct_and_stand_out_from_the_context():
    """The old palette had two purples 6 CIE76 units apart (indistinguishable): every pair of task
    colours, the target colour included, must now differ clearly."""
    st = load_style()
    colours = [st["task"]["target_color"], *st["task"]["palette"]]
    assert len(set(colours)) == len(colours)
    labs = [_srgb_to_lab(c) for c in colours]
    worst = min(np.linalg.norm(a - b) for i, a in enumerate(labs) for b in labs[i + 1 :])
    assert worst >= 25, worst
    for ground in (
        st["background"],
        st["context"]["building"]["face"],
        st["context"]["area"]["face"],
        st["context"]["water"]["face"],
    ):
        assert min(np.linalg.norm(_srgb_to_lab(ground) - lab) for lab in labs) >= 30


def test_reused_colours_go_to_features_far_apart(bench):
    """More features than palette colours: a colour is only reused far from its first user."""
    st = load_style()
    n_pal = len(st["task"]["palette"])
    feats = [("F0", "building", _rect(-20, -20, 40, 30), {})]
    for k in range(n_pal + 3):  # a ring of POIs around the building
        a = 2 * np.pi * k / (n_pal + 3)
        feats.append((f"F{k + 1}", "poi", _pt(140 * np.cos(a), 140 * np.sin(a)), {}))
    _, rec = render_map(_inst("helsinki-qa-M18-050", feats), _ctx(bench))
    cols = {fid: f["color"] for fid, f in rec["features"].items()}
    assert cols["F0"] == st["task"]["target_color"]
    assert [cols[f"F{k + 1}"] for k in range(n_pal)] == st["task"]["palette"]
    pt = PixelTransform.from_sidecar(rec)
    px = {fid: pt.geometry_task_to_pixel(shape(g)) for fid, _, g, _ in feats}
    ring_step = min(px["F1"].distance(px["F2"]), px["F2"].distance(px["F3"]))
    for a in cols:
        for b in cols:
            if a < b and cols[a] == cols[b]:
                assert px[a].distance(px[b]) > 2.5 * ring_step, (a, b, cols[a])


def test_crowded_points_get_an_inset_that_separates_them(bench):
    """POIs a metre apart merge into one blob at map scale (seen in Helsinki M18): they get an
    inset in which their markers are clearly apart and each is labelled."""
    feats = [
        ("F0", "building", _rect(-40, -30, 80, 60), {}),
        ("F1", "poi", _pt(10.0, 5.0), {}),
        ("F2", "poi", _pt(10.8, 5.3), {}),
        ("F3", "poi", _pt(11.2, 4.4), {}),
        ("F4", "poi", _pt(-120, 90), {}),
    ]
    inst = _inst("helsinki-qa-M18-051", feats)
    _, rec = render_map(inst, _ctx(bench))
    assert len(rec["insets"]) == 1
    ins = rec["insets"][0]
    assert set(ins["features"]) == {"F1", "F2", "F3"}
    assert rec["features"]["F4"]["in_inset"] is None
    ipt = PixelTransform.from_sidecar(rec, inset=ins["id"])
    marker = load_style()["task"]["point_size"]
    pts = {fid: ipt.geometry_task_to_pixel(shape(g)) for fid, _, g, _ in feats[1:4]}
    for a in pts:
        assert box(*ins["bbox"]).contains(pts[a])
        assert box(*ins["labels"][a]["bbox"]).distance(pts[a]) >= 6
        for b in pts:
            if a < b:
                assert pts[a].distance(pts[b]) > marker + 4, (a, b)


def test_point_beside_a_road_gets_an_inset_showing_both(bench):
    """A POI 0.6 m from a road (Stockholm O03): the inset must show the road next to the point,
    clearly apart, not the point alone in an empty frame."""
    road = {"type": "LineString", "coordinates": [[X0 - 150, Y0 - 150], [X0 + 150, Y0 + 150]]}
    feats = [
        ("F0", "road", road, {}),
        ("F1", "poi", _pt(30.42, 29.58), {}),
        ("F2", "building", _rect(-120, 40, 40, 30), {}),
    ]
    _, rec = render_map(_inst("helsinki-qa-O03-055", feats), _ctx(bench))
    assert [i["features"] for i in rec["insets"]] == [["F1"]]
    ins = rec["insets"][0]
    ipt = PixelTransform.from_sidecar(rec, inset=ins["id"])
    inner = box(*ins["bbox"])
    p = ipt.geometry_task_to_pixel(shape(feats[1][2]))
    r = ipt.geometry_task_to_pixel(shape(road)).intersection(inner)
    assert not r.is_empty and r.length > 100
    st = load_style()["task"]
    gap = p.distance(r) - st["target_line_width"] / 2 - st["point_size"] / 2
    assert gap >= 8, gap  # at map scale the marker touched the road's stroke


def test_wide_poi_cluster_gets_a_larger_inset_that_hides_no_task_outline(bench):
    """Kibera M18: a dozen POIs a few metres apart along the edge of a 600 m area. The inset grows
    beyond the default size to magnify them, without covering any task feature's outline."""
    st = load_style()["insets"]
    tri = {
        "type": "Polygon",
        "coordinates": [
            [[X0 - 300, Y0 - 300], [X0 + 300, Y0 - 300], [X0 - 300, Y0 + 300], [X0 - 300, Y0 - 300]]
        ],
    }
    feats = [("F0", "area", tri, {})]
    for k in range(12):  # along the west edge, alternately just inside and just outside
        feats.append((f"F{k + 1}", "poi", _pt(-300 + (1.5 if k % 2 else -1.5), 200 - 3.0 * k), {}))
    inst = _inst("helsinki-qa-M18-056", feats)
    _, rec = render_map(inst, _ctx(bench))
    assert len(rec["insets"]) == 1
    ins = rec["insets"][0]
    assert set(ins["features"]) == {f"F{k + 1}" for k in range(12)}
    x0, y0, x1, y1 = ins["bbox"]
    assert st["size_px"] < x1 - x0 <= st["max_size_px"] and 0 <= x0 and x1 <= 1536 and 0 <= y0 and y1 <= 1536
    pt = PixelTransform.from_sidecar(rec)
    area = pt.geometry_task_to_pixel(shape(feats[0][2]))
    assert not box(*ins["bbox"]).intersects(area)
    # the 17-row legend must not cover the area's far corner either (it used to)
    assert not box(*rec["legend"]["bbox"]).intersects(area.boundary.buffer(4))
    ipt = PixelTransform.from_sidecar(rec, inset=ins["id"])
    pts = {fid: ipt.geometry_task_to_pixel(shape(g)) for fid, _, g, _ in feats[1:]}
    for a, pa in pts.items():
        assert box(*ins["bbox"]).contains(pa)
        lab = box(*ins["labels"][a]["bbox"])
        assert box(*ins["bbox"]).contains(lab)
        assert all(not lab.intersects(pb.buffer(3)) for pb in pts.values())


def test_isolated_points_get_no_inset(bench):
    feats = [
        ("F0", "poi", _pt(0, 0), {}),
        ("F1", "poi", _pt(60, 40), {}),
        ("F2", "building", _rect(-80, 30, 30, 20), {}),
    ]
    _, rec = render_map(_inst("helsinki-qa-M18-052", feats), _ctx(bench))
    assert rec["insets"] == []


def _target_pixels(png, colour):
    img = np.asarray(Image.open(__import__("io").BytesIO(png)).convert("RGB")).astype(int)
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
    return np.all(np.abs(img - rgb) <= 6, axis=2)


def test_a_feature_equal_to_the_target_leaves_the_target_outline_visible(bench):
    """T01 (equality): F1 drawn exactly over F0 used to hide F0's outline almost entirely."""
    st = load_style()
    g = _rect(-30, -20, 60, 40)
    inst = _inst(
        "helsinki-qa-T01-053",
        [
            ("F0", "building", g, {}),
            ("F1", "building", json.loads(json.dumps(g)), {}),
            ("F2", "building", _rect(60, 30, 30, 20), {}),
        ],
    )
    png, rec = render_map(inst, _ctx(bench))
    mask = _target_pixels(png, st["task"]["target_color"])
    pt = PixelTransform.from_sidecar(rec)
    poly = pt.geometry_task_to_pixel(shape(g))
    # the middle of the fringe outside F1's stroke (F1's fill tints the inner half)
    mid = (st["task"]["target_polygon_edge_width"] + st["task"]["polygon_edge_width"]) / 4
    offset = poly.buffer(mid, join_style=2).exterior
    labels = shapely.union_all([box(*lab["bbox"]).buffer(4) for lab in rec["labels"].values()])
    samples = [
        p
        for p in (offset.interpolate(f, normalized=True) for f in np.linspace(0, 1, 400, endpoint=False))
        if not labels.contains(p)
    ]
    assert len(samples) > 300
    hits = sum(bool(mask[int(p.y) - 1 : int(p.y) + 2, int(p.x) - 1 : int(p.x) + 2].any()) for p in samples)
    assert hits >= 0.9 * len(samples), (hits, len(samples))


def test_card_says_not_set_for_an_absent_attribute(bench):
    """`layer` missing on a road is 'not set' (the question's own words), not 'n/a'."""
    line = {"type": "LineString", "coordinates": [[X0 - 100, Y0], [X0 + 100, Y0 + 5]]}
    cross = {"type": "LineString", "coordinates": [[X0, Y0 - 100], [X0 + 3, Y0 + 100]]}
    inst = _inst(
        "helsinki-qa-O06-054",
        [
            ("F0", "road", line, {"bridge": "no", "tunnel": "no"}),
            ("F1", "road", cross, {"layer": -1, "bridge": "no", "tunnel": "yes"}),
        ],
        attributes=["layer", "bridge", "tunnel"],
    )
    _, rec = render_map(inst, _ctx(bench))
    cards = {c["feature"]: c["text"] for c in rec["attribute_cards"]}
    assert cards == {
        "F0": "F0: layer not set, bridge no, tunnel no",
        "F1": "F1: layer -1, bridge no, tunnel yes",
    }


def test_scalebar_length_is_the_true_ground_distance(sidecars):
    """The bar's two ends, taken back to WGS 84 through the sidecar transform, are as far apart
    on the ellipsoid as the label says (Web Mercator metres would be ~2x too long here)."""
    geod = Geod(ellps="WGS84")
    for iid, rec in sidecars.items():
        pt = PixelTransform.from_sidecar(rec)
        x0, y0, x1, y1 = rec["scalebar"]["bbox"]
        bx, by = x0 + 12, y1 - 12  # the bar's left end (see furniture.draw_scalebar)
        lon0, lat0 = pt.pixel_to_lonlat(bx, by)
        lon1, lat1 = pt.pixel_to_lonlat(bx + rec["scalebar"]["length_px"], by)
        d = geod.inv(float(lon0), float(lat0), float(lon1), float(lat1))[2]
        assert d == pytest.approx(rec["scalebar"]["length_m"], rel=2e-3), iid
        label = [t["text"] for t in rec["texts"] if t["role"] == "scalebar" and t["text"] != "0"]
        assert len(label) == 1
        value, unit = label[0].split()
        assert float(value) * {"m": 1.0, "km": 1000.0}[unit] == rec["scalebar"]["length_m"]


def test_legend_can_fold_into_columns_without_overlapping_entries(bench):
    """The fallback for a legend that would hide task geometry: 2 columns, about half as tall."""
    from scoring.render.furniture.legend import legend_layout, legend_rows
    from scoring.render.renderer import MapRenderer

    feats = [("F0", "area", _rect(-100, -100, 200, 200), {})] + [
        (f"F{k + 1}", "poi", _pt(-90 + 15 * k, 120), {}) for k in range(14)
    ]
    m = MapRenderer(_inst("helsinki-qa-M18-057", feats), _ctx(bench), load_style())
    canvas = m.prepare()
    rows = legend_rows(m.subject, {"road": 1, "building": 1, "area": 0, "poi": 0})
    one, two = legend_layout(canvas, rows, 1), legend_layout(canvas, rows, 2)
    (w1, h1), placed1 = one.size, one.placed
    (w2, h2), row_h, placed2 = two.size, two.row_height, two.placed
    assert h2 < 0.7 * h1 and w2 > w1
    assert [p[:3] for p in placed2 if p[0] != "header"] == [p[:3] for p in placed1 if p[0] != "header"]
    slots = {(p[3], p[4]) for p in placed2}
    assert len(slots) == len(placed2)  # no two entries on one spot
    assert all(12 + (p[4] + 1) * row_h <= h2 for p in placed2)
    assert max(p[3] for p in placed2) > 0


def test_tiny_buildings_far_apart_get_separate_readable_insets(bench):
    """Kibera T08: two overlapping 5-px buildings and a third 60 px away shared one x2 inset in
    which all stayed unreadable. Now each group is magnified until its members are readable."""
    ist = load_style()["insets"]
    feats = [
        ("F0", "area", _rect(-750, -750, 1500, 1500), {}),
        ("F1", "building", _rect(0, 0, 8, 5), {}),
        ("F2", "building", _rect(5, 2, 8, 5), {}),
        ("F3", "building", _rect(80, 0, 8, 5), {}),
    ]
    _, rec = render_map(_inst("helsinki-qa-T08-058", feats), _ctx(bench))
    pt = PixelTransform.from_sidecar(rec)
    main = {fid: pt.geometry_task_to_pixel(shape(g)) for fid, _, g, _ in feats}
    assert max(main["F1"].bounds[2] - main["F1"].bounds[0], main["F1"].bounds[3] - main["F1"].bounds[1]) < 10
    assert main["F1"].distance(main["F3"]) < 80  # close enough that they used to be grouped
    assert sorted(sorted(i["features"]) for i in rec["insets"]) == [["F1", "F2"], ["F3"]]
    for ins in rec["insets"]:
        ipt = PixelTransform.from_sidecar(rec, inset=ins["id"])
        for fid in ins["features"]:
            g = ipt.geometry_task_to_pixel(shape(dict((f, g) for f, _, g, _ in feats)[fid]))
            b = g.bounds
            assert max(b[2] - b[0], b[3] - b[1]) >= 0.9 * ist["readable_px"], (fid, b)
            assert box(*ins["bbox"]).contains(g)


def _pixels(bench, iid):
    return np.asarray(Image.open(bench / "maps" / f"{iid}.png").convert("RGB")).astype(int)


@pytest.mark.parametrize("iid", ["helsinki-qa-O06-002", "helsinki-qa-O06-003"])
def test_layer_questions_do_not_show_which_road_is_drawn_on_top(bench, sidecars, instances, iid):
    """O06: the road drawn last looked like the upper one (always F1, whatever the answer).
    Where task roads cross, a neutral disc now covers both strokes, cards shown or withheld."""
    st = load_style()["task"]
    rec = sidecars[iid]
    geoms = {
        f["id"]: PixelTransform.from_sidecar(rec).geometry_task_to_pixel(shape(f["geometry"]))
        for f in instances[iid]["scene"]["features"]
    }
    x = geoms["F0"].intersection(geoms["F1"])
    assert rec["crossings"] == [[round(x.x, 2), round(x.y, 2)]]
    img = _pixels(bench, iid)
    r = st["crossing"]["size"] / 2 - st["crossing"]["edge_width"] - 1.5
    rows, cols = np.mgrid[0 : img.shape[0], 0 : img.shape[1]]
    disc = (cols + 0.5 - x.x) ** 2 + (rows + 0.5 - x.y) ** 2 <= r * r
    face = np.array([int(st["crossing"]["face"][i : i + 2], 16) for i in (1, 3, 5)])
    assert disc.sum() > 100 and np.all(np.abs(img[disc] - face) <= 3)
    assert any(t["role"] == "legend" and t["text"] == "crossing (level not drawn)" for t in rec["texts"])


def test_other_relations_draw_crossings_plainly(bench, sidecars, instances):
    iid = "helsinki-qa-T04-007"  # roads F4 and F5 cross; no level attributes involved
    rec = sidecars[iid]
    assert rec["crossings"] == []
    assert not any(t["text"].startswith("crossing") for t in rec["texts"])
    geoms = {
        f["id"]: PixelTransform.from_sidecar(rec).geometry_task_to_pixel(shape(f["geometry"]))
        for f in instances[iid]["scene"]["features"]
    }
    x = geoms["F4"].intersection(geoms["F5"])
    px = _pixels(bench, iid)[int(x.y), int(x.x)]
    colour = rec["features"]["F5"]["color"]
    assert np.all(np.abs(px - np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])) <= 3)
