"""Where the OSM extract is read: in a child process beside the executor's workers when there are
several (issue 33), in the calling process when there is one worker. The plugin builds with one
worker inside QGIS, whose sys.executable is the qgis binary: a spawned reader would start QGIS
itself, a forked one would inherit Qt's threads (seen in the real desktop app: "the reading
process stopped without a word")."""

from __future__ import annotations

import hashlib

import shapely

from scoring.execute import LocalExecutor
from scoring.extract import osm


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

    monkeypatch.setattr(osm.mp, "get_context", no_process)
    assert _fingerprint(osm.load_pools()) == in_child
    assert _fingerprint(osm.load_pools(executor=LocalExecutor(1))) == in_child
