"""The sweep's background renderer with the cross-map modalities: after a benchmark's maps it draws
the map sets (`spatialgap render --modalities ...` in a child process), a map-set run awaits them,
and a resumed sweep draws none again."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from scoring.evaluate.cities import MapRenderer
from scoring.formats.benchmark import Benchmark
from scoring.formats.mapsets import MapSet, set_path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
from render_synthetic import make_bench

SETS = ("image-multi", "image-context")


async def _sweep(renderer: MapRenderer, bench: Path, iid: str) -> list[MapSet]:
    """The renderer's task and two map-set runs waiting for one instance's sets, side by side."""
    async with asyncio.TaskGroup() as tg:
        tg.create_task(renderer.run())
        waits = [tg.create_task(renderer.map_set(bench, m, iid)) for m in SETS]
    return [w.result() for w in waits]


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    path = make_bench(tmp_path_factory.mktemp("sweep-sets") / "helsinki")
    ids = [i["id"] for i in Benchmark.open(path).all_instances()]
    renderer = MapRenderer([(path, ids)], jobs=2, sets=SETS)
    sets = asyncio.run(_sweep(renderer, path, ids[0]))
    assert [s.modality for s in sets] == list(SETS) and all(s.pngs for s in sets)
    return path


def test_map_sets_are_drawn_after_the_maps_and_awaited(bench):
    ids = [i["id"] for i in Benchmark.open(bench).all_instances()]
    for iid in ids:
        assert (bench / "maps" / f"{iid}.png").is_file()
        for m in SETS:
            assert set_path(bench / "maps", iid, m).is_file()


def test_a_resumed_sweep_draws_nothing_again(bench):
    before = {p.name: p.stat().st_mtime_ns for p in (bench / "maps").iterdir()}
    iid = Benchmark.open(bench).all_instances()[0]["id"]
    renderer = MapRenderer([(bench, [])], jobs=1, sets=SETS)
    asyncio.run(_sweep(renderer, bench, iid))
    assert {p.name: p.stat().st_mtime_ns for p in (bench / "maps").iterdir()} == before
