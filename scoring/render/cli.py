"""`spatialgap render`: draw the annotated maps of a benchmark (matplotlib, no QGIS needed)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from scoring.errors import InputError


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
    p.add_argument("--ids", nargs="+", metavar="ID", help="render only these instance ids")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    # matplotlib loads only when maps are drawn, not whenever the CLI builds its parser
    from scoring.render.batch import render_benchmark

    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"--jobs must be at least 1 (got {args.jobs})")
    summary = render_benchmark(args.bench, jobs=args.jobs, progress=not args.no_progress, ids=args.ids)
    print(
        f"rendered {len(summary.rendered)} maps into {summary.out_dir} "
        f"({summary.maps_per_second:.1f} maps/s)"
    )
    return 0
