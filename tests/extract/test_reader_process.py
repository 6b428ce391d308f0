"""Where the OSM extract is read: in a child process beside the executor's workers when there are
several (issue 33), in the calling process when there is one worker. The plugin builds with one
worker inside QGIS, whose sys.executable is the qgis binary: a spawned reader would start QGIS
itself, a forked one would inherit Qt's threads (seen in the real desktop app: "the reading
process stopped without a word")."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import shapely

from scoring.build.cli import early_reading
from scoring.execute import LocalExecutor
from scoring.extract import osm, reading


def _fingerprint(pools) -> str:
    h = hashlib.sha256()
    for kind in sorted(pools.features):
        for f in pools.features[kind]:
            h.update(f"{kind}|{f.uid}|{sorted(f.props.items())}".encode())
            h.update(shapely.to_wkb(f.geom))
    return h.hexdigest()


def test_one_worker_reads_in_this_process_and_reads_the_same(monkeypatch):
    in_child = _fingerprint(osm.load_pools(executor=LocalExecutor(2)))

    def no_process(*args, **kwargs):
        raise AssertionError("a single-worker read started a process")

    monkeypatch.setattr(reading.mp, "get_context", no_process)
    assert _fingerprint(osm.load_pools()) == in_child
    assert _fingerprint(osm.load_pools(executor=LocalExecutor(1))) == in_child


def _counting_starts(monkeypatch) -> list:
    started: list = []
    real = osm.start_reading

    def counted(path, custom_indexing="YES"):
        started.append(custom_indexing)
        return real(path, custom_indexing)

    monkeypatch.setattr(osm, "start_reading", counted)
    return started


def test_a_reading_started_early_is_taken_over_and_reads_the_same(monkeypatch):
    # `spatialgap build` starts the reading process before it imports the builder
    fresh = _fingerprint(osm.load_pools(executor=LocalExecutor(2)))
    started = _counting_starts(monkeypatch)
    early = reading.start_reading(osm.default_osm_path())
    assert _fingerprint(osm.load_pools(executor=LocalExecutor(2), reading=early)) == fresh
    assert started == []  # no second reader
    assert not early.proc.is_alive()


def _unsorted_osm(path: Path) -> Path:
    """40 square buildings whose nodes come in decreasing id order (as JOSM saves new nodes)."""
    nodes, ways, nid = [], [], 1000
    for b in range(40):
        x0, y0 = 24.94 + (b % 8) * 0.0006, 60.17 + (b // 8) * 0.0006
        refs = []
        for dx, dy in ((0, 0), (0.0003, 0), (0.0003, 0.0002), (0, 0.0002)):
            nodes.append(f'<node id="{nid}" version="1" lat="{y0 + dy:.7f}" lon="{x0 + dx:.7f}"/>')
            refs.append(nid)
            nid -= 1
        nds = "".join(f'<nd ref="{r}"/>' for r in [*refs, refs[0]])
        ways.append(f'<way id="{5000 + b}" version="1">{nds}<tag k="building" v="yes"/></way>')
    path.write_text('<?xml version="1.0"?><osm version="0.6">' + "".join(nodes + ways) + "</osm>")
    return path


def test_an_early_reading_of_unsorted_ids_is_read_again_without_custom_indexing(tmp_path, monkeypatch):
    path = _unsorted_osm(tmp_path / "josm.osm")
    started = _counting_starts(monkeypatch)
    early = reading.start_reading(path)
    asm, _ = osm._read_assembled(path, {}, LocalExecutor(2), early)
    assert started == ["NO"] and asm.read == 40 and asm.layers["multipolygons"] == 40
    assert not early.proc.is_alive()  # the failed first attempt's process ended


def test_an_early_reading_the_build_never_takes_is_ended(tmp_path):
    args = argparse.Namespace(vector=None, mapping=None, osm=None)
    with early_reading(args, LocalExecutor(2)) as started:
        assert started is not None and started.proc.is_alive()
    assert not started.proc.is_alive()
    vector = argparse.Namespace(vector="x.geojson", mapping="m.toml", osm=None)
    for a, ex in ((args, LocalExecutor(1)), (vector, LocalExecutor(2))):  # read in this process
        with early_reading(a, ex) as none:
            assert none is None
    missing = argparse.Namespace(vector=None, mapping=None, osm=str(tmp_path / "none.osm"))
    with early_reading(missing, LocalExecutor(2)) as none:  # the build says what is wrong
        assert none is None
