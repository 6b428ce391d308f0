"""Determinism, atomic output, CLI and benchmark loading errors."""

import argparse
import os

import pytest

import scoring.support.files
from scoring.errors import InputError
from scoring.formats.benchmark import Benchmark
from scoring.render import ContextIndex, render_instance, render_map
from scoring.render.sidecar.records import write_map_files


def _ctx(bench):
    return ContextIndex.from_file(bench / "context.geojsonl", 32635)


def test_rendering_twice_gives_identical_bytes(bench, instances):
    ctx = _ctx(bench)
    inst = instances["helsinki-qa-T04-007"]
    a, ra = render_map(inst, ctx)
    b, rb = render_map(inst, ctx)
    assert a == b and ra == rb
    assert a[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"Software" not in a and b"matplotlib" not in a


def test_in_process_render_matches_parallel_worker_render(bench, instances, tmp_path):
    ctx = _ctx(bench)
    for iid in ("helsinki-qa-M12-004", "helsinki-edit-D02-005"):
        paths = render_instance(instances[iid], ctx, tmp_path)
        for kind in ("png", "sidecar", "world", "aux"):
            assert paths[kind].read_bytes() == (bench / "maps" / paths[kind].name).read_bytes(), (iid, kind)


def test_context_is_drawn_and_only_nearby(sidecars, bench):
    total = sum(1 for _ in (bench / "context.geojsonl").open())
    for rec in sidecars.values():
        n = sum(rec["context_counts"].values())
        assert 0 < n < total


def test_interrupted_write_leaves_no_png(bench, instances, tmp_path, monkeypatch):
    real_replace = scoring.support.files.os.replace

    def boom(src, dst):
        if str(dst).endswith(".png"):
            raise KeyboardInterrupt
        return real_replace(src, dst)

    monkeypatch.setattr(scoring.support.files.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        render_instance(instances["helsinki-qa-T04-001"], _ctx(bench), tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert not any(n.endswith(".png") for n in names)
    assert not any(n.endswith(".tmp") for n in names)


def _parse(argv):
    from scoring.render.cli import add_parser

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    add_parser(sub)
    return parser.parse_args(argv)


def test_cli_renders_selected_ids(bench, tmp_path, capsys):
    import shutil

    b = tmp_path / "b"
    shutil.copytree(bench, b, ignore=shutil.ignore_patterns("maps"))
    args = _parse(
        ["render", "--bench", str(b), "--jobs", "1", "--ids", "helsinki-qa-O06-002", "--no-progress"]
    )
    assert args.func(args) == 0
    assert sorted(p.name for p in (b / "maps").glob("*.png")) == ["helsinki-qa-O06-002.png"]
    assert "rendered 1 maps" in capsys.readouterr().out


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda p: None, "not found"),
        (lambda p: p.mkdir(), "no manifest.json"),
        (
            lambda p: (
                p.mkdir(),
                (p / "manifest.json").write_text("{}"),
                (p / "qa.jsonl").write_text('{"id": "x", "scene": {"features": []}}\n'),
            ),
            "invalid manifest",
        ),
        (lambda p: (p.mkdir(), (p / "manifest.json").write_text('{"crs": {"epsg": 32635}}')), "no instances"),
    ],
)
def test_cli_rejects_bad_benchmarks_with_one_line(tmp_path, setup, message):
    p = tmp_path / "nope"
    setup(p)
    args = _parse(["render", "--bench", str(p), "--jobs", "1"])
    with pytest.raises(InputError) as exc:
        args.func(args)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_unknown_id_is_an_input_error(bench):
    args = _parse(["render", "--bench", str(bench), "--ids", "nope", "--jobs", "1"])
    with pytest.raises(InputError, match="unknown instance id"):
        args.func(args)


def test_sidecar_records_versions_and_transform(sidecars):
    import matplotlib

    from scoring.render import RENDERER_VERSION

    for rec in sidecars.values():
        assert rec["renderer"]["version"] == RENDERER_VERSION
        assert rec["renderer"]["matplotlib"] == matplotlib.__version__
        gt, inv = rec["transform"]["geotransform"], rec["transform"]["inverse_geotransform"]
        # inverse really inverts: pixel (100, 200) -> X, Y -> back
        x = gt[0] + 100 * gt[1] + 200 * gt[2]
        y = gt[3] + 100 * gt[4] + 200 * gt[5]
        assert inv[0] + inv[1] * x + inv[2] * y == pytest.approx(100, abs=1e-6)
        assert inv[3] + inv[4] * x + inv[5] * y == pytest.approx(200, abs=1e-6)
        assert rec["crs"]["task_epsg"] == 32635 and rec["image"]["width"] == 1536


def test_map_files_are_whole_ordinary_files_after_rewrites(bench, instances, tmp_path):
    """The lean writer: files get 0o666 less the umask (as write_atomic gives), rewriting replaces
    them whole, and no temporary is left beside them."""
    png, record = render_map(instances["helsinki-qa-T04-001"], _ctx(bench))
    old = os.umask(0o027)
    try:
        write_map_files(tmp_path, b"x" * 10_000_000, record)  # longer than the map: must not linger
        paths = write_map_files(tmp_path, png, record)
    finally:
        os.umask(old)
    assert paths["png"].read_bytes() == png
    assert paths["sidecar"].read_text().startswith("{")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths.values())
    assert {p.stat().st_mode & 0o777 for p in paths.values()} == {0o640}


def test_cli_edit_first_draws_the_editing_maps_first(bench, monkeypatch, capsys):
    # a sweep's map runs follow the render editing first, so it must draw in that order
    import scoring.render.batch as batch

    drawn = []

    def record(bench_dir, progress, ids, executor, start_method):
        drawn.append(list(ids))
        return argparse.Namespace(rendered=list(ids), out_dir="maps", maps_per_second=1.0)

    monkeypatch.setattr(batch, "render_benchmark", record)
    chosen = ["helsinki-qa-O06-002", "helsinki-edit-D02-005", "helsinki-qa-M12-004"]
    args = _parse(["render", "--bench", str(bench), "--edit-first", "--ids", *chosen, "--no-progress"])
    assert args.func(args) == 0
    qa_in_file_order = [i["id"] for i in Benchmark.open(bench).of_task("qa") if i["id"] in chosen]
    assert drawn[-1] == ["helsinki-edit-D02-005", *qa_in_file_order]
    args = _parse(["render", "--bench", str(bench), "--edit-first", "--no-progress"])
    assert args.func(args) == 0
    tasks = [i.split("-")[1] for i in drawn[-1]]
    assert tasks == sorted(tasks, key=["edit", "qa"].index) and {"edit", "qa"} == set(tasks)
    with pytest.raises(InputError, match="unknown instance"):
        args.func(_parse(["render", "--bench", str(bench), "--edit-first", "--ids", "nope", "--no-progress"]))
