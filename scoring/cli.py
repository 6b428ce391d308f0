"""The `spatialgap` command. Each sub-command lives in the module of its pipeline stage and
registers itself through an `add_parser(subparsers)` function, so this file only wires them.

Only the module of the command being run is imported: `spatialgap serve-agent` must not load
GDAL or matplotlib (its first line on stderr is the address it serves, read by `evaluate`)."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import difflib
import enum
import errno
import importlib
import json
import logging
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn

from scoring import version_info
from scoring.errors import SpatialGapError
from scoring.support.process import one_blas_thread, sigterm_as_ctrl_c

# Stage modules in data-flow order, with the commands each registers (setting `func`).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "scoring.build.cli": ("build",),  # OSM extract -> pools -> scenes + oracle -> instances
    "scoring.relations.reference": ("reference",),  # catalogue -> resources/relations.md
    "scoring.render.cli": ("render",),  # instances -> rendered maps
    "scoring.runner.cli": ("run", "extract", "serve-agent"),  # instances -> model runs -> predictions
    "scoring.frieda": ("frieda-score",),  # FRIEDA-style free-form map answers -> verdicts
    "scoring.frieda.run": ("frieda-run",),  # a FRIEDA-format dataset -> model answers -> verdicts
    "scoring.score.cli": ("score", "report", "selfcheck", "gate", "compare"),  # predictions -> verdicts
    "scoring.evaluate": ("evaluate",),  # the main job: all of the above end to end
    "scoring.browse": ("browse",),  # scored results -> the per-sample browser
    "scoring.export": ("export",),  # a benchmark -> a Hugging Face / Parquet / JSONL dataset
}


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """The one formatter of every command: an option's default is shown after its help, unless
    the help already states it or there is none to show (None, off, a required option)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (
            "default" in text
            or not action.option_strings
            or action.required
            or action.default is None
            or action.default is False  # a flag: off unless given
            or action.default == argparse.SUPPRESS
        ):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose argument errors also print the --json record when asked for."""

    json_errors = False  # set by `main` when --json is on the command line

    def error(self, message: str) -> NoReturn:
        """Usage and the error on stderr, as argparse does; under --json the record on stdout too."""
        if _Parser.json_errors:
            command = self.prog.split()[1] if len(self.prog.split()) > 1 else None
            record = {"command": command, "exit_code": 2, "error": message, **version_info()}
            print(json.dumps({**record, "out": None, "summary": None}, sort_keys=True))
        super().error(message)


def _choices_by_value(parser: argparse.ArgumentParser) -> None:
    """Enum choices as their values, so an error lists 'geojson', not <Modality.GEOJSON: ...>
    (a StrEnum member equals its value: parsed members still pass the choices check)."""
    for action in parser._actions:
        if action.choices is not None and not isinstance(action.choices, dict):
            action.choices = [str(c) if isinstance(c, enum.Enum) else c for c in action.choices]
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                _choices_by_value(sub)


def _unknown_command(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """A "did you mean" error line for a mistyped command, else None (the commands: those the
    parser's modules registered; an unknown command's parser has them all)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    known = list(subs.choices)
    if command is None or command in known:
        return None
    close = difflib.get_close_matches(command, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else f" (commands: {', '.join(known)})"
    return f"unknown command {command!r}{hint}"


def _shared_formatter(sub: Any) -> None:
    """Every sub-command's parser (added by its stage's module) gets HelpFormatter."""
    add = sub.add_parser

    def add_parser(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs.setdefault("formatter_class", HelpFormatter)
        return add(name, **kwargs)

    sub.add_parser = add_parser


def make_parser(modules: Iterable[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="spatialgap",
        description="Spatial Gap: build, render, run, score and report geospatial reasoning benchmarks.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and commit, then exit")
    talk = parser.add_mutually_exclusive_group()
    talk.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    talk.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="errors only: no progress bars, logged warnings or result lines (--json still prints)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="when the command ends, print one JSON object on stdout (and nothing else there: the "
        "command's own lines go to stderr): command, exit code, version, and the summary.json the "
        "command wrote, if any",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _shared_formatter(sub)
    for name in modules:
        importlib.import_module(name).add_parser(sub)
    _choices_by_value(parser)
    return parser


class _Version(argparse.Action):
    """`spatialgap --version`: the version and the commit it was built from (one line)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any, **__: Any) -> None:
        info = version_info()
        print(f"spatialgap {info['version']} (commit {info['commit']})")
        parser.exit()


def _summary_of(args: argparse.Namespace) -> dict | None:
    """The summary.json a command wrote into its output directory (evaluate: results/)."""
    out = getattr(args, "out", None)
    if not out:
        return None
    for path in (Path(out) / "summary.json", Path(out) / "results" / "summary.json"):
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            continue
    return None


def _print_json(args: argparse.Namespace, code: int, error: str | None) -> None:
    record = {"command": args.command, "exit_code": code, "error": error, **version_info()}
    record["out"] = str(args.out) if getattr(args, "out", None) else None
    record["summary"] = _summary_of(args) if code == 0 else None
    print(json.dumps(record, sort_keys=True, default=str))


def _module_of(argv: list[str]) -> list[str]:
    """The module registering the command in ``argv`` (all of them for help or an unknown one)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    for module, commands in COMMAND_MODULES.items():
        if command in commands:
            return [module]
    return list(COMMAND_MODULES)


def main(argv: list[str] | None = None) -> int:
    one_blas_thread()  # before any command module loads numpy
    sigterm_as_ctrl_c()  # a scheduler's SIGTERM: the same clean end as Ctrl-C
    argv = sys.argv[1:] if argv is None else list(argv)
    _Parser.json_errors = "--json" in argv
    parser = make_parser(_module_of(argv))
    unknown = _unknown_command(parser, argv)
    if unknown is not None and not {"-h", "--help", "--version"} & set(argv):
        parser.error(unknown)
    args = parser.parse_args(argv)
    level = logging.INFO if args.verbose else logging.ERROR if args.quiet else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    bad = next((a for a in argv if "\0" in a), None)
    if bad is not None:  # a path with a NUL byte reaches no file: say so before anything opens
        return _fail(args.command, f"argument {short_text(bad)!r} contains a NUL byte", EXIT_ERROR)
    if hasattr(args, "no_progress") and (args.quiet or not sys.stderr.isatty()):
        args.no_progress = True  # progress frames (\r) only on a terminal, never into a log
    # stdout holds the result: under --json only the JSON object (the command's own lines go to
    # stderr), under -q nothing but that object either
    with contextlib.ExitStack() as stack:
        if args.quiet:
            stack.enter_context(contextlib.redirect_stdout(stack.enter_context(open(os.devnull, "w"))))
        elif args.json:
            stack.enter_context(contextlib.redirect_stdout(sys.stderr))
        code, error = _call(args)
    if args.json:
        _print_json(args, code, error)
    return code


def _call(args: argparse.Namespace) -> tuple[int, str | None]:
    try:
        return int(args.func(args) or 0), None
    except SpatialGapError as exc:
        return _fail(args.command, str(exc), exc.exit_code), _one_line(str(exc))
    except OSError as exc:  # disk full, a name too long, permissions: the system's word, one line
        return _fail(args.command, os_error_text(exc), EXIT_ERROR), os_error_text(exc)
    except KeyboardInterrupt:
        print(f"spatialgap {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED, "interrupted"


# Exit codes every command shares (README "Exit codes"); 1 and 3 are the run commands' own
# (some requests failed; a model was stopped).
EXIT_ERROR = 2  # bad input, an unwritable output, a system error: one line on stderr
EXIT_INTERRUPTED = 130  # Ctrl-C
MAX_SHOWN = 160  # characters of a user's path or value an error line quotes


def short_text(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` as an error line quotes it: its ends when it is longer than ``limit``."""
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return f"{text[:half]}…{text[-half:]}"


def os_error_text(exc: OSError) -> str:
    """An OSError as one line: the file (shortened), then what the system said."""
    what = exc.strerror or errno.errorcode.get(exc.errno or 0, "") or str(exc)
    if exc.errno == errno.ENOSPC:
        what += " (free some space, then re-run: finished work is kept)"
    names = [n for n in (exc.filename, exc.filename2) if n is not None]
    where = " -> ".join(short_text(os.fsdecode(n)) for n in names)
    return _one_line(f"{where}: {what}" if where else what)


def _one_line(text: str) -> str:
    """``text`` on one line, any word longer than MAX_SHOWN (a 5,000-character path) shortened."""
    return " ".join(short_text(word) for word in text.split())


def _fail(command: str, message: str, code: int) -> int:
    print(f"spatialgap {command}: error: {_one_line(message)}", file=sys.stderr)
    return code


def run() -> None:
    """The `spatialgap` command (and `python -m scoring`): `main`, then the process ends without
    tearing the interpreter down. By then every file the command wrote is closed and synced and
    its child processes are done; the exit handlers still run (logging, multiprocessing, Dask),
    but freeing a sweep's millions of objects one by one (benchmark, journals, caches) does not:
    it took half a second the user waited for, at the end of the sweep and of its render."""
    code = main()
    atexit._run_exitfuncs()  # what a normal exit runs first; then only the freeing is left
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing left to say
            pass
    os._exit(code)
