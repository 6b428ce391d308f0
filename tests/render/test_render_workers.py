"""Who writes the maps: local pool workers write their own files, a distributed executor's workers
hand the bytes back to be written by the caller; the files are the same either way."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.execute import Executor
from scoring.formats.benchmark import Benchmark
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
    # png, sidecar, world file, aux.xml each, and the maps' index; no temporary left behind
    assert len(pool) == 4 * 7 + 1 and "maps.json" in pool
    assert back == pool
    maps = {name for name in pool if name != "maps.json"}  # (the session's index lists all its maps)
    assert {n: pool[n] for n in maps} == {name: (bench / "maps" / name).read_bytes() for name in maps}


def test_workers_write_into_the_directory_given(bench, tmp_path):
    inst = Benchmark.open(bench).all_instances()[:2]
    ctx = MapContext.of(Benchmark.open(bench), str(tmp_path))
    ids = render_batch_to_files(inst, ctx)
    assert ids == [i["id"] for i in inst]
    for iid in ids:
        assert (tmp_path / f"{iid}.png").read_bytes() == (bench / "maps" / f"{iid}.png").read_bytes()
    with pytest.raises(ValueError, match="out_dir"):
        render_batch_to_files(inst, MapContext.of(Benchmark.open(bench)))


def _copy_without_maps(bench: Path, dest: Path) -> Path:
    shutil.copytree(bench, dest, ignore=shutil.ignore_patterns("maps"))
    return dest


def _render_cli(bench: Path, stdin: str, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "scoring", "render", "--bench", str(bench), "--no-progress", *extra]
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=300)


def test_cli_reads_ids_from_stdin_and_forked_workers_draw_the_same_maps(bench, tmp_path):
    # `spatialgap render` forks its workers from a warmed-up parent (Linux): same files as the
    # session's maps, drawn by spawned workers
    copy = _copy_without_maps(bench, tmp_path / "b")
    ids = [i["id"] for i in Benchmark.open(copy).all_instances()]
    done = _render_cli(copy, "\n".join(ids[:5]) + "\n", "--jobs", "2", "--ids-file", "-")
    assert done.returncode == 0, done.stderr
    assert "rendered 5 maps" in done.stdout
    drawn = _files(copy / "maps")
    assert len(drawn) == 4 * 5 + 1 and json.loads(drawn.pop("maps.json"))["count"] == 5
    assert drawn == {name: (bench / "maps" / name).read_bytes() for name in drawn}


def test_cli_with_an_empty_id_list_draws_nothing(bench, tmp_path):
    # a sweep that started the render early and then needs no map closes its input empty
    missing = tmp_path / "not-built-yet"
    done = _render_cli(missing, "", "--ids-file", "-")
    assert done.returncode == 0, done.stderr
    assert "nothing to render" in done.stdout and not missing.exists()
    absent = tmp_path / "absent.txt"
    bad = _render_cli(bench, "", "--ids-file", str(absent))
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines() == [
        f"spatialgap render: error: --ids-file {absent}: cannot read (No such file or directory)"
    ]
