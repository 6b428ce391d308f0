"""Who writes the maps: local pool workers write their own files, a distributed executor's workers
hand the bytes back to be written by the caller; the files are the same either way."""

from pathlib import Path

import pytest

from scoring.benchmark import Benchmark
from scoring.execute import Executor
from scoring.render import render_benchmark
from scoring.render.batch import MapContext, render_batch_to_files


class HandBack(Executor):
    """An executor whose workers might sit on other machines (as Dask's): here, this process."""

    name = "hand-back"
    distributed = True

    def __init__(self):
        self.calls: list[str] = []

    def map(self, fn, items, *, shared=None, **_):
        for item in items:
            self.calls.append(fn.__name__)
            yield fn(item, shared)


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def test_pool_workers_and_handed_back_bytes_write_the_same_files(bench, tmp_path):
    ex = HandBack()
    s = render_benchmark(bench, out_dir=tmp_path / "back", executor=ex)
    assert ex.calls and set(ex.calls) == {"render_batch"}  # bytes travel back, the caller writes
    pooled = render_benchmark(bench, jobs=2, progress=False, out_dir=tmp_path / "pool")
    assert pooled.rendered == s.rendered and len(s.rendered) == 7
    back, pool = _files(tmp_path / "back"), _files(tmp_path / "pool")
    assert len(pool) == 4 * 7  # png, sidecar, world file, aux.xml; no temporary left behind
    assert back == pool
    assert pool == {name: (bench / "maps" / name).read_bytes() for name in pool}  # the session's


def test_workers_write_into_the_directory_given(bench, tmp_path):
    inst = Benchmark.open(bench).all_instances()[:2]
    ctx = MapContext.of(Benchmark.open(bench), str(tmp_path))
    ids = render_batch_to_files(inst, ctx)
    assert ids == [i["id"] for i in inst]
    for iid in ids:
        assert (tmp_path / f"{iid}.png").read_bytes() == (bench / "maps" / f"{iid}.png").read_bytes()
    with pytest.raises(ValueError, match="out_dir"):
        render_batch_to_files(inst, MapContext.of(Benchmark.open(bench)))
