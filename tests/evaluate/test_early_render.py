"""The render a sweep starts before its benchmark is built: it waits for the ids, then the maps a
run awaits come from it; unused, it ends without drawing; a failure reaches the sweep."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from scoring.errors import SpatialGapError
from scoring.evaluate.cities import MapRenderer
from scoring.evaluate.early_render import EarlyRender
from scoring.formats.benchmark import Benchmark

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "render"))
from render_synthetic import make_bench


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return make_bench(tmp_path_factory.mktemp("early-source") / "helsinki")


async def _first_map(renderer: MapRenderer, bench: Path, iid: str) -> bytes:
    async with asyncio.TaskGroup() as tg:
        tg.create_task(renderer.run())
        png = tg.create_task(renderer.map_png(bench, iid))
    return png.result()


def test_started_before_the_build_it_draws_the_maps_it_is_then_given(source, tmp_path):
    bench = tmp_path / "helsinki"
    early = EarlyRender(bench, jobs=2)  # the benchmark does not exist yet
    shutil.copytree(source, bench, ignore=shutil.ignore_patterns("maps"))  # "the build"
    ids = [i["id"] for i in Benchmark.open(bench).all_instances()]
    renderer = MapRenderer([(bench, ids)], jobs=2, early=early)
    png = asyncio.run(_first_map(renderer, bench, ids[-1]))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert sorted(p.name for p in (bench / "maps").glob("*.png")) == sorted(f"{i}.png" for i in ids)
    assert renderer.early is None  # used up: the renderer's stop() has nothing left to end


def test_the_ids_sent_early_start_the_drawing_and_the_render_then_waits_for_it(source, tmp_path):
    bench = tmp_path / "helsinki"
    early = EarlyRender(bench, jobs=1)
    shutil.copytree(source, bench, ignore=shutil.ignore_patterns("maps"))
    ids = [i["id"] for i in Benchmark.open(bench).all_instances()][:2]
    early.send(ids)  # as the sweep does right after the build, before it plans its runs
    early.send(ids)  # once only
    assert early._wait() == b"" and early._proc.returncode == 0  # drawn with no run waiting
    assert sorted(p.name for p in (bench / "maps").glob("*.png")) == sorted(f"{i}.png" for i in ids)
    renderer = MapRenderer([(bench, ids)], jobs=1, early=early)
    assert asyncio.run(_first_map(renderer, bench, ids[0])).startswith(b"\x89PNG")


def test_unused_it_ends_without_drawing(source, tmp_path):
    bench = tmp_path / "helsinki"
    early = EarlyRender(bench, jobs=2)
    renderer = MapRenderer([(bench, [])], jobs=2, early=early)
    asyncio.run(renderer.run())  # the build found every map drawn: no id to hand over
    assert early._proc.returncode == 0 and not bench.exists()
    never_used = EarlyRender(tmp_path / "elsewhere", jobs=1)
    MapRenderer([], jobs=1, early=never_used).stop()  # the sweep failed before its runs
    assert never_used._proc.poll() is not None


def test_its_failure_reaches_the_sweep(source, tmp_path):
    bench = tmp_path / "helsinki"
    early = EarlyRender(bench, jobs=1)
    shutil.copytree(source, bench, ignore=shutil.ignore_patterns("maps"))
    renderer = MapRenderer([(bench, ["helsinki-qa-nope-000"])], jobs=1, early=early)
    with pytest.raises(SpatialGapError, match="rendering the maps of .* failed: .*unknown instance"):
        asyncio.run(renderer.run())
