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

from scoring.build.request import build_request, built_here
from scoring.errors import InputError
from scoring.execute import Executor, LocalExecutor, add_executor_args, executor_from_args
from scoring.extract.reading import (
    Reading,
    check_readable,
    default_osm_path,
    start_reading,
    start_vector_reading,
)
from scoring.support.lock import lock_output
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
    out = Path(args.out)
    # one build at a time per --out (the lock sits beside it: a build replaces the whole directory)
    with lock_output(out, "build", beside=True):
        built = None if args.force else _built_before(args, out)
        with executor_from_args(args, args.jobs) as executor:
            if built is not None:  # an interrupted build of this request: only its maps are left
                print(f"resuming: {out} holds this request's benchmark; drawing the maps still missing")
                return _render(args, executor, built)
            with early_reading(args, executor) as reading:
                return _build_then_render(args, executor, reading)


def _built_before(args: argparse.Namespace, out: Path) -> dict | None:
    """The manifest in --out when the same command built it (the same request on the same source
    bytes, by this version): a re-run after an interruption resumes instead of refusing --out."""
    source = Path(args.vector or args.osm or default_osm_path())
    try:
        protocol = str(Protocol(args.protocol))
    except ValueError:
        return None  # the builder says why
    options = {
        "city": args.city,
        "seed": args.seed,
        "qa_per_relation": args.qa,
        "edit_per_relation": args.edit,
        "relations": args.relations,
        "pool_split": not args.no_pool_split,
        "protocol": protocol,
        "unanswerable_share": args.unanswerable_share,
    }
    request = build_request(options, args.mapping)
    return built_here(out, source, request)


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
    return _render(args, executor, m)


def _render(args: argparse.Namespace, executor: Executor, manifest: dict) -> int:
    """The maps not drawn yet (all of them after a fresh build), unless --no-render. A map is
    drawn when its PNG is there: it is written last, each file atomically."""
    if args.no_render:
        return 0
    # The next stage, for the command only: the builder itself never needs matplotlib.
    from scoring.formats.benchmark import Benchmark
    from scoring.render import render_benchmark

    out = Path(args.out)
    bench = Benchmark.open(out)
    for tmp in bench.maps_dir.glob(".*.tmp"):  # a map a KILL cut short (this build holds the lock)
        tmp.unlink(missing_ok=True)
    missing = [i["id"] for i in bench.all_instances() if not (bench.maps_dir / f"{i['id']}.png").is_file()]
    if missing:
        render_benchmark(bench, ids=missing, progress=not args.no_progress, executor=executor)
    drawn = sum(manifest["counts"][t] for t in ("qa", "edit")) - len(missing)
    print(f"rendered maps into {out / 'maps'} ({len(missing)} drawn now, {drawn} kept)")
    return 0
