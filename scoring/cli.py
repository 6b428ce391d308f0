"""The `spatialgap` command. Each sub-command lives in the module of its pipeline stage and
registers itself through an `add_parser(subparsers)` function, so this file only wires them."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from scoring import __version__
from scoring.errors import SpatialGapError

# Stage modules in data-flow order; each defines add_parser(subparsers) setting `func`.
COMMAND_MODULES = [
    "scoring.build",  # OSM extract -> pools -> scenes + oracle -> instances
    "scoring.reference_doc",  # catalogue -> resources/relations.md
    "scoring.render.cli",  # instances -> rendered maps
    "scoring.runner.cli",  # instances -> model runs -> predictions (run, serve-agent)
    "scoring.frieda",  # FRIEDA-style free-form map answers -> verdicts
    "scoring.score.cli",  # predictions -> verdicts -> reports (score, report, selfcheck, gate)
    "scoring.evaluate",  # the main job: all of the above end to end with the reference agents
]


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spatialgap",
        description="Spatial Gap: build, render, run, score and report geospatial reasoning benchmarks.",
    )
    parser.add_argument("--version", action="version", version=f"spatialgap {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except SpatialGapError as exc:
        print(f"spatialgap {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"spatialgap {args.command}: interrupted", file=sys.stderr)
        return 130
