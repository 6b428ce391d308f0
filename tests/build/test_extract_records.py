"""The OSM reader reads fields by index (fast) and gets what GDAL's name-based items() gives."""

from scoring.extract.osm import _open_osm, _read_records, default_osm_path


def _records_by_name(path):
    out = []
    ds = _open_osm(path)
    while True:
        feat, layer = ds.GetNextFeature(include_layer=True)
        if feat is None:
            break
        name = layer.GetName()
        g = feat.GetGeometryRef()
        if name not in ("points", "lines", "multipolygons") or g is None:
            continue
        # other_tags: no pool reads it, so the reader leaves it
        fields = {k: v for k, v in feat.items().items() if v not in (None, "") and k != "other_tags"}
        out.append((name, fields, bytes(g.ExportToWkb())))
    return out


def test_fields_read_by_index_are_those_items_gives():
    path = default_osm_path()
    fast = [r for chunk in _read_records(path, chunk=997) for r in chunk]  # chunks join seamlessly
    slow = _records_by_name(path)
    assert len(fast) == len(slow) > 1000
    assert fast == slow
    # in the same order too (dict equality ignores it)
    assert all(list(a[1]) == list(b[1]) for a, b in zip(fast, slow, strict=True))
    assert any(r[1].get("building") for r in fast) and any(r[1].get("highway") for r in fast)


def test_projecting_all_at_once_is_projecting_each():
    from pyproj import Transformer
    from shapely.geometry import LineString, Point, Polygon

    from scoring.extract.assemble import _project_all, _project_one

    to_utm = Transformer.from_crs(4326, 32635, always_xy=True)
    geoms = [
        Point(24.94, 60.17),
        None,
        LineString([(24.93, 60.16), (24.95, 60.171)]),
        Polygon([(24.9, 60.1), (24.91, 60.1), (24.91, 60.11)]),
    ]
    together = _project_all(geoms, to_utm)
    assert together[1] is None
    for g, t in zip(geoms, together, strict=True):
        if g is not None:
            one = _project_one(g, to_utm)
            assert t.geom_type == one.geom_type and t.equals_exact(one, 0.0)
            assert list(t.coords if t.geom_type != "Polygon" else t.exterior.coords) == list(
                one.coords if one.geom_type != "Polygon" else one.exterior.coords
            )
