"""`spatialgap build`: its options, and the reading of the extract started before the builder
loads (issue 33 item 3).

This module imports the standard library and the light vocabulary only: the command forks the
process that reads the extract first, so GDAL reads while this process imports the relation
catalogue, numpy, shapely and PROJ (a fifth of a second, otherwise spent before the read began).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path

from scoring.errors import InputError
from scoring.execute import Executor, LocalExecutor, add_executor_args, executor_from_args
from scoring.extract.reading import (
    Reading,
    check_readable,
    default_osm_path,
    start_reading,
    start_vector_reading,
)
from scoring.vocab import DEFAULT_PER_RELATION, DEFAULT_SHARE, PROTOCOLS, Protocol


def add_parser(sub) -> None:
    """The `build` sub-command and its options."""
    p = sub.add_parser(
        "build",
        help="build a benchmark from an OSM extract",
        description="Build QA and editing instances from a real OSM extract.",
    )
    p.add_argument("--osm", help="an .osm.pbf or .osm file (default: the embedded Helsinki extract)")
    p.add_argument(
        "--vector",
        help="a GeoJSON, GeoPackage or Shapefile instead of OSM data (needs --mapping; "
        "see resources/mappings/)",
    )
    p.add_argument("--mapping", help="TOML file mapping the --vector file's layers and attributes to pools")
    p.add_argument("--out", required=True, help="output directory (created atomically)")
    p.add_argument("--city", help="city name (default: from the file name)")
    p.add_argument(
        "--seed", type=int, default=0, help="seed of every random draw (same seed, same benchmark)"
    )
    p.add_argument("--qa", type=int, default=DEFAULT_PER_RELATION, help="QA instances per relation")
    p.add_argument("--edit", type=int, default=DEFAULT_PER_RELATION, help="editing instances per relation")
    p.add_argument("--relations", nargs="+", help="only these relation codes")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    add_executor_args(p)
    p.add_argument("--force", action="store_true", help="replace an existing output directory")
    p.add_argument(
        "--no-pool-split",
        action="store_true",
        help="let QA and editing draw from the same features (default: separate pools by spatial tiles)",
    )
    p.add_argument(
        "--protocol",
        choices=list(PROTOCOLS),
        default=str(Protocol.SPATIALGAP),
        help="spatialgap (default: our own choices) or paper (GeoSpatialBench's protocol: O06 "
        "attributes on the map only, interval options, topology classes, pixel-geometry edits)",
    )
    p.add_argument(
        "--unanswerable-share",
        type=float,
        default=None,
        help=f"unanswerable variants per answerable item and relation, added to them (default "
        f"{DEFAULT_SHARE:g} under --protocol spatialgap, 0 under paper; see resources/relations.md)",
    )
    p.add_argument("--no-render", action="store_true", help="skip rendering the map images")
    p.add_argument(
        "--no-progress", action="store_true", help="no progress bar (off anyway when stderr is no terminal)"
    )
    p.set_defaults(func=_cli)


def _cli(args: argparse.Namespace) -> int:
    if args.qa < 0 or args.edit < 0:
        raise InputError("--qa and --edit must be >= 0")
    with executor_from_args(args, args.jobs) as executor, early_reading(args, executor) as reading:
        return _build_then_render(args, executor, reading)


@contextlib.contextmanager
def early_reading(args: argparse.Namespace, executor: Executor) -> Iterator[Reading | None]:
    """The input's reading process, started now when the build has a local pool of several
    workers (one worker: the build reads in its own process, as inside QGIS), else None. Ended
    on the way out, whether the build took it over or stopped before (a bad --out, Ctrl-C)."""
    files = _input_files(args) if isinstance(executor, LocalExecutor) and executor.workers >= 2 else None
    if files is None:
        yield None
        return
    path, mapping = files
    with start_vector_reading(path, mapping) if mapping is not None else start_reading(path) as reading:
        yield reading


def _input_files(args: argparse.Namespace) -> tuple[Path, Path | None] | None:
    """The extract (and a vector file's mapping) the build will read, or None where the build
    itself will refuse the options or the files (it says why, as without an early start)."""
    try:
        if args.vector is None and args.mapping is None:
            path = Path(args.osm) if args.osm is not None else default_osm_path()
            check_readable(path)
            return path, None
        if args.vector is None or args.mapping is None or args.osm is not None:
            return None
        check_readable(Path(args.vector))
        check_readable(Path(args.mapping))
    except InputError:
        return None
    return Path(args.vector), Path(args.mapping)


def _build_then_render(args: argparse.Namespace, executor: Executor, reading: Reading | None = None) -> int:
    from scoring.build.builder import build_benchmark  # after the reading started

    m = build_benchmark(
        args.osm,
        Path(args.out),
        args.city,
        args.seed,
        args.qa,
        args.edit,
        args.relations,
        args.jobs,
        args.force,
        progress=not args.no_progress,
        executor=executor,
        pool_split=not args.no_pool_split,
        vector=args.vector,
        mapping=args.mapping,
        protocol=args.protocol,
        unanswerable_share=args.unanswerable_share,
        reading=reading,
    )
    print(
        f"built {m['counts']['qa']} QA + {m['counts']['edit']} editing instances for "
        f"{m['city']} ({m['crs']['name']}) in {args.out}"
    )
    for s in m["shortfalls"]:
        print(f"  shortfall {s['relation']} {s['task']}: {s['built']}/{s['requested']}: {s['shortfall']}")
    if not args.no_render:
        # The next stage, for the command only: the builder itself never needs matplotlib.
        from scoring.render import render_benchmark

        render_benchmark(Path(args.out), progress=not args.no_progress, executor=executor)
        print(f"rendered maps into {Path(args.out) / 'maps'}")
    return 0
