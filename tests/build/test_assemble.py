"""The streamed assembly (scoring.extract.assemble) gives the pools a one-pass read gave: the same
features, geometry to the bit, stats in the same order, whatever the chunking; its array calls
give what the one-geometry-at-a-time calls give."""

import numpy as np
import pytest
import shapely
from shapely.geometry import LineString, Point, Polygon

from scoring.errors import InputError
from scoring.extract import assemble, prepare
from scoring.extract.osm import _read_raw, default_osm_path
from scoring.geometry.georef import snap_to_grid


@pytest.fixture(scope="module")
def raw():
    return _read_raw(default_osm_path(), {})


def _fingerprint(pools):
    return (
        pools.crs.as_dict(),
        pools.thresholds.as_dict(),
        list(pools.stats.items()),
        {k: [(f.uid, f.props, f.geom.wkb) for f in fs] for k, fs in pools.features.items()},
        [(f.uid, f.props, f.geom.wkb) for f in pools.context["water"]],
    )


def test_chunking_changes_nothing(raw):
    path = default_osm_path()
    whole = assemble.pools_from_records([raw], path, "helsinki", {})
    n = 997  # a prime: chunk edges fall anywhere
    chunked = assemble.pools_from_records(
        (raw[i : i + n] for i in range(0, len(raw), n)), path, "helsinki", {}
    )
    assert _fingerprint(whole) == _fingerprint(chunked)
    assert sum(len(v) for v in whole.features.values()) > 1000
    # Helsinki has both events: their order is that of their first record, as one pass sees them
    assert [k for k in whole.stats if k in ("repaired", "dropped_geometry")] == [
        "repaired",
        "dropped_geometry",
    ]


def test_event_order_follows_the_first_record():
    bad_ring = Polygon([(0, 0), (1, 1), (1, 0), (0, 1)])  # a bow-tie: repaired by make_valid
    asm = assemble.PoolAssembler()
    lon, lat = 24.94, 60.17
    road = LineString([(lon, lat), (lon, lat)])  # zero length: dropped
    bow = shapely.affinity.translate(shapely.affinity.scale(bad_ring, 1e-3, 1e-3), lon, lat)
    pts = [(f"node/{i}", Point(lon + i * 1e-4, lat)) for i in range(40)]
    records = [("lines", {"highway": "residential", "osm_id": "1"}, road.wkb)]
    records += [("multipolygons", {"building": "yes", "osm_way_id": "2"}, bow.wkb)]
    records += [("points", {"amenity": "cafe", "osm_id": str(i)}, p.wkb) for i, (_, p) in enumerate(pts)]
    stats: dict = {}
    asm.add(records)
    with pytest.raises(InputError, match="no usable roads, buildings or land use"):
        asm.finish(default_osm_path(), "t", stats)  # POIs alone build nothing; the stats are kept
    assert list(stats)[:3] == ["read", "dropped_geometry", "repaired"]  # the road came first
    stats = {}
    asm = assemble.PoolAssembler()
    asm.add([records[1], records[0], *records[2:]])
    with pytest.raises(InputError, match="no usable roads"):
        asm.finish(default_osm_path(), "t", stats)
    assert list(stats)[:3] == ["read", "repaired", "dropped_geometry"]


def test_snap_all_is_snap_to_grid_of_each(raw):
    geoms = [g for g in shapely.from_wkb([w for _, _, w in raw[:3000]], on_invalid="ignore") if g is not None]
    # in metres, like the task CRS (coordinates of hundreds of km: the grid's hard case)
    moved = [shapely.affinity.scale(g, 1e4, 1e4, origin=(0, 0)) for g in geoms]
    moved = [g for g in moved if g.is_valid]
    together = assemble.snap_all(moved)
    for g, t in zip(moved, together, strict=True):
        one = snap_to_grid(g)
        assert t.wkb == one.wkb
    assert np.array_equal(shapely.get_coordinates(together), np.round(shapely.get_coordinates(together), 2))


def test_cleaning_on_workers_is_cleaning_here(raw, monkeypatch):
    from scoring.execute import LocalExecutor

    path = default_osm_path()
    here = assemble.pools_from_records([raw], path, "helsinki", {})
    monkeypatch.setattr(prepare, "PARALLEL_MIN", 0)  # Helsinki is small: ship it all the same
    asm = assemble.PoolAssembler()
    for i in range(0, len(raw), 500):  # one prepare job per chunk of 500 records
        asm.add(raw[i : i + 500])
    with LocalExecutor(2) as ex:
        there = asm.finish(path, "helsinki", {}, ex)
    assert _fingerprint(here) == _fingerprint(there)


def test_chunks_prepared_in_a_wrong_zone_are_prepared_again(raw):
    """Issue 33 item 3: a chunk prepared while reading, in the zone of the records read so far,
    is used when that was the city's zone and prepared again when not; the pools are the same."""
    path = default_osm_path()
    here = assemble.pools_from_records([raw], path, "helsinki", {})
    asm = assemble.PoolAssembler()
    jobs = [j for i in range(0, len(raw), 2000) if (j := asm.add(raw[i : i + 2000], speculate=True))]
    assert {j[0] for j in jobs} == {here.crs.epsg} and all(j[3] for j in jobs)
    wrong = [(32634 if k % 2 else epsg, w, r, s) for k, (epsg, w, r, s) in enumerate(jobs)]
    prepared = [prepare.collect(asm, c, prepare.prepare_chunk(j)) for c, j in enumerate(wrong)]
    assert prepared[1]["epsg"] == 32634
    assert _fingerprint(asm.finish(path, "helsinki", {}, None, prepared)) == _fingerprint(here)
