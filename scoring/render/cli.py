"""`spatialgap render`: draw the annotated maps of a benchmark (matplotlib, no QGIS needed)."""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path

from scoring.errors import InputError
from scoring.execute import add_executor_args, executor_from_args
from scoring.formats.benchmark import Benchmark
from scoring.vocab import Modality, Task


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "render",
        help="render the annotated map (PNG + sidecar + world file) of every instance",
        description="Render each instance of a benchmark as a georeferenced 1536x1536 PNG in <bench>/maps/.",
    )
    p.add_argument(
        "--bench", required=True, type=Path, metavar="DIR", help="benchmark directory (with manifest.json)"
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="worker processes (default: number of CPUs)",
    )
    ids = p.add_mutually_exclusive_group()
    ids.add_argument("--ids", nargs="+", metavar="ID", help="render only these instance ids")
    ids.add_argument(
        "--ids-file",
        metavar="FILE",
        help="render only the instance ids listed in FILE (whitespace-separated; - reads standard "
        "input, after the renderer has loaded: a caller may start it while the benchmark is "
        "still being built); an empty list draws nothing",
    )
    p.add_argument(
        "--edit-first",
        action="store_true",
        help="draw the editing instances' maps before the QA ones (a sweep then ends on QA runs, "
        "the quickest to score)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_executor_args(p)
    p.add_argument(
        "--modalities",
        default=str(Modality.IMAGE),
        metavar="LIST",
        help="comma-separated map modalities to draw: image (one map per instance, the default), "
        "image-multi, image-context (map sets; see scoring/render/multi.py)",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    # matplotlib loads only when maps are drawn, not whenever the CLI builds its parser
    from scoring.render.batch import render_benchmark

    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs must be at least 1 (got {args.jobs})")
    modalities = [m.strip() for m in str(args.modalities).split(",") if m.strip()]
    drawable = [str(m) for m in Modality if m.has_image and m is not Modality.TOGETHER]
    bad = [m for m in modalities if m not in drawable]
    if bad or not modalities:
        raise InputError(
            f"--modalities: unknown {bad[0] if bad else '(empty)'!r} (expected {', '.join(drawable)})"
        )
    if args.ids_file is not None:
        args.ids = _read_ids(args.ids_file)
        if not args.ids:
            print("no instance ids given: nothing to render")
            return 0
    if Modality.IMAGE in modalities:
        bench = Benchmark.open(args.bench)
        ids = args.ids
        if args.edit_first:
            wanted = {i["id"] for i in bench.select(args.ids)} if args.ids else None
            ids = [
                i["id"]
                for t in (Task.EDIT, Task.QA)
                for i in bench.of_task(t)
                if not wanted or i["id"] in wanted
            ]
            ids = ids or None
        with executor_from_args(args, args.jobs) as executor:
            summary = render_benchmark(
                bench,
                progress=not args.no_progress,
                ids=ids,
                executor=executor,
                start_method=_start_method(),
            )
        print(
            f"rendered {len(summary.rendered)} maps into {summary.out_dir} "
            f"({summary.maps_per_second:.1f} maps/s)"
        )
    sets = [m for m in modalities if Modality(m).map_set]
    if sets:
        from scoring.render.multi import render_map_sets

        with executor_from_args(args, args.jobs) as executor:  # the stage's executor, Dask too
            s = render_map_sets(args.bench, sets, ids=args.ids, jobs=args.jobs, executor=executor)
        written = ", ".join(f"{n} {m}" for m, n in s.sets.items())
        print(f"rendered {s.maps} maps for {written} map sets into {s.out_dir} ({s.seconds:.1f} s)")
    return 0


def _read_ids(name: str) -> list[str]:
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"--ids-file {name}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"--ids-file {name}: not UTF-8 text") from None
    return text.split()


def _start_method() -> str:
    """'fork' where it is safe and cheaper: Linux, this command's own process with no other
    thread (workers then inherit the loaded renderer instead of importing and warming it up
    each); elsewhere 'spawn' (macOS system frameworks do not survive a fork)."""
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"
