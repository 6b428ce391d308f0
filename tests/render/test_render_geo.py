"""Georeferencing: transforms round-trip, GDAL reads what the sidecar says, pixels sit where
the transform says the features are."""

import math

import numpy as np
import pytest
import shapely
from shapely.geometry import shape

from scoring.geometry.georef import PixelTransform


def _vertices(inst):
    for f in inst["scene"]["features"]:
        g = shape(f["geometry"])
        for x, y in shapely.get_coordinates(g):
            yield f["id"], float(x), float(y)


def test_every_task_vertex_round_trips_within_half_a_pixel(sidecars, instances):
    for iid, inst in instances.items():
        pt = PixelTransform.from_sidecar(sidecars[iid])
        for fid, x, y in _vertices(inst):
            col, row = pt.task_to_pixel(x, y)
            assert 0 <= col <= 1536 and 0 <= row <= 1536, (iid, fid)
            # exact inverse
            bx, by = pt.pixel_to_task(col, row)
            assert math.hypot(bx - x, by - y) < 1e-6, (iid, fid)
            # through the pixel grid: snapping to the pixel centre moves at most half a pixel per axis
            half = 0.5 * pt.ground_pixel_size_at_task(x, y)
            cx, cy = pt.pixel_to_task(math.floor(col) + 0.5, math.floor(row) + 0.5)
            assert math.hypot(cx - x, cy - y) <= half * math.sqrt(2) * 1.002, (iid, fid)


def test_pixel_to_task_moves_one_ground_pixel_per_pixel(sidecars, instances):
    iid = "helsinki-qa-T04-001"
    pt = PixelTransform.from_sidecar(sidecars[iid])
    g = pt.ground_pixel_size()
    assert g == pytest.approx(sidecars[iid]["view"]["ground_pixel_size_m"], rel=1e-5)
    x0, y0 = pt.pixel_to_task(768, 768)
    x1, y1 = pt.pixel_to_task(868, 768)
    # 100 px east = 100 ground pixels (UTM grid scale here: 0.9998)
    assert math.hypot(x1 - x0, y1 - y0) == pytest.approx(100 * g, rel=5e-4)
    x2, y2 = pt.pixel_to_task(768, 868)
    assert math.hypot(x2 - x0, y2 - y0) == pytest.approx(100 * pt.ground_pixel_size_ns(), rel=5e-4)
    # Web Mercator: ground metres = 3857 metres * cos(lat) (+0.25 % ellipsoidal term at 60 N)
    lat = sidecars[iid]["view"]["center_lonlat"][1]
    assert pt.resolution * math.cos(math.radians(lat)) == pytest.approx(g, rel=4e-3)


def test_geometry_pixel_to_task_inverts_task_to_pixel(sidecars, instances):
    iid = "helsinki-qa-T04-007"
    pt = PixelTransform.from_sidecar(sidecars[iid])
    for f in instances[iid]["scene"]["features"]:
        g = shape(f["geometry"])
        back = pt.geometry_pixel_to_task(pt.geometry_task_to_pixel(g))
        assert back.geom_type == g.geom_type
        assert shapely.hausdorff_distance(back, g) < 1e-6


def test_gdal_opens_map_with_recorded_geotransform_and_3857(bench, sidecars):
    from osgeo import gdal, osr

    gdal.UseExceptions()
    for iid, rec in sidecars.items():
        ds = gdal.Open(str(bench / "maps" / f"{iid}.png"))
        assert (ds.RasterXSize, ds.RasterYSize) == (1536, 1536)
        assert ds.RasterCount == 3
        gt = ds.GetGeoTransform()
        assert np.allclose(gt, rec["transform"]["geotransform"], rtol=0, atol=1e-6), iid
        srs = osr.SpatialReference(wkt=ds.GetProjection())
        srs.AutoIdentifyEPSG()
        assert srs.GetAuthorityName(None) == "EPSG" and srs.GetAuthorityCode(None) == "3857", iid
        ds = None


def test_world_file_uses_pixel_centres(bench, sidecars):
    iid = "helsinki-qa-O06-002"
    gt = sidecars[iid]["transform"]["geotransform"]
    a, d, b, e, c, f = (float(v) for v in (bench / "maps" / f"{iid}.pgw").read_text().split())
    assert (a, e) == (gt[1], gt[5]) and b == d == 0
    assert c == pytest.approx(gt[0] + gt[1] / 2, abs=1e-6)
    assert f == pytest.approx(gt[3] + gt[5] / 2, abs=1e-6)


def test_point_features_are_drawn_where_the_transform_puts_them(bench, sidecars, instances):
    from PIL import Image

    for iid in ("helsinki-qa-M12-004", "helsinki-edit-D02-005", "helsinki-qa-T04-007"):
        img = np.asarray(Image.open(bench / "maps" / f"{iid}.png").convert("RGB")).astype(int)
        pt = PixelTransform.from_sidecar(sidecars[iid])
        for f in instances[iid]["scene"]["features"]:
            if f["geometry"]["type"] != "Point":
                continue
            col, row = pt.task_to_pixel(*f["geometry"]["coordinates"])
            colour = sidecars[iid]["features"][f["id"]]["color"]
            want = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
            # the marker ring, 4-5 px from the centre (the centre has a white dot)
            got = img[int(row), int(col) + 5]
            assert np.abs(got - want).max() <= 12, (iid, f["id"], got, want)
