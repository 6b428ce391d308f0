"""Stage 3 — feature pools -> scenes + oracle answers -> instances (`spatialgap build`).

Work is split into shards, one per (relation, task), searched in two rounds of small jobs
(scoring.build.shards: batches of slots, then each shard finished in slot order); every job is a
pure function of (pools, seed, relation, task, slot indices), so jobs can run on any worker
(scoring.execute: a process pool or a Dask cluster) and the same input and seed give
byte-identical files.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from scoring import __version__
from scoring.build.blind import cross_fitted, manifest_record
from scoring.build.build_report import build_report_markdown
from scoring.build.context import (
    CONTEXT_RULE,
    context_chunks,
    context_lines,
    join_selections,
)
from scoring.build.request import build_request
from scoring.build.sampling import EAGER_UP_TO
from scoring.build.shards import (
    SLOTS_PER_BATCH,
    Found,
    Shard,
    ShardFinish,
    SlotBatch,
    find_slots,
    finish_shard,
    needs_rework,
    slot_batches,
)
from scoring.constraints.framing import MAP_FRAME
from scoring.errors import InputError, OutputError
from scoring.execute import Executor, LocalExecutor
from scoring.execute.base import Progress
from scoring.extract.osm import load_pools
from scoring.extract.pools import FeaturePools, split_pools, unsplit_record
from scoring.extract.reading import Reading, gdal_version, reader
from scoring.formats.benchmark import TIMING
from scoring.formats.mapsets import MAP_SETS
from scoring.relations import CATALOGUE
from scoring.relations.unanswerable import (
    check_share,
    unanswerable_summary,
)
from scoring.support.files import sha256_file, write_atomic, write_json_atomic
from scoring.vocab import DEFAULT_PER_RELATION, MODALITIES, PROTOCOLS, TASKS, Protocol

log = logging.getLogger(__name__)

# 2: issue 29 (paper protocol items, nudge slack); 3: M02 editing keeps a pair its drawn band left
# no room for (the other band is taken); 4: issue 33, a pool of more than EAGER_UP_TO anchors in a
# lazy seeded order (scoring.build.sampling) instead of a whole shuffle, its rescue walk capped.
# A build whose pools are all smaller is format 3's, byte for byte, and says 3. 5 (eager) and 6
# (lazy): options that carry no information about the right one (scoring.relations.options, the
# paper's intervals and labels), O06 with three options, M14's count drawn uniformly, and the
# manifest's options-only baseline (`options_only`).
FORMAT_VERSION = 5
LAZY_FORMAT_VERSION = 6
FORMATS = (FORMAT_VERSION, LAZY_FORMAT_VERSION)  # what this builder writes
GUIDED_SHARE = 0.5  # of all slots: while more are to come, a shard is dispatched whole


def format_version(pools: FeaturePools) -> int:
    """The format a build of `pools` is: 6 when some anchor pool is drawn lazily, else 5."""
    lazy = any(len(feats) > EAGER_UP_TO for task in TASKS for feats in pools.for_task(task).features.values())
    return LAZY_FORMAT_VERSION if lazy else FORMAT_VERSION


def build_benchmark(
    osm: str | None,
    out: Path,
    city: str | None = None,
    seed: int = 0,
    n_qa: int = DEFAULT_PER_RELATION,
    n_edit: int = DEFAULT_PER_RELATION,
    relations: list[str] | None = None,
    jobs: int | None = None,
    force: bool = False,
    progress: Progress = True,
    executor: Executor | None = None,  # where the shards run (default: `jobs` local processes)
    pool_split: bool = True,
    vector: str | None = None,  # a GeoJSON / GeoPackage / Shapefile instead of OSM data
    mapping: str | None = None,  # its mapping to the pools (scoring.extract.vector)
    protocol: str = "spatialgap",
    unanswerable_share: float | None = None,  # None: DEFAULT_SHARE under spatialgap, 0 under paper
    reading: Reading | None = None,  # the extract's reading process, started by the caller
) -> dict:
    """Build a benchmark from ``osm`` (None: the embedded Helsinki extract) or ``vector`` data into
    ``out``; returns its manifest. ``n_qa`` and ``n_edit`` are instances *per relation* (the
    default 25 + 25 over the 28 relations is the 700 + 700 of `make run`); ``relations`` limits
    the catalogue. The shards run on ``executor`` (default: ``jobs`` local processes)."""
    out = Path(out)
    protocol = _check_protocol(protocol)
    share = check_share(unanswerable_share, protocol)
    _check_output(out, force)
    t0 = time.perf_counter()
    executor = executor or LocalExecutor(jobs)
    pools = _read_pools(osm, vector, mapping, city, executor, reading)
    split = split_pools(pools) if pool_split else unsplit_record(pools)
    t_extract = time.perf_counter() - t0
    codes = relations or sorted(CATALOGUE)
    unknown = [c for c in codes if c not in CATALOGUE]
    if unknown:
        raise CATALOGUE.unknown(unknown[0])
    per_task = (("qa", n_qa), ("edit", n_edit))
    shards = [Shard(c, t, n, seed, protocol, share) for c in codes for t, n in per_task if n > 0]
    results, context = _map_shards(pools, shards, executor, progress)
    t_build = time.perf_counter() - t0 - t_extract
    # the instances as their lines, and what the manifest counts of each (scoring.build.shards)
    lines = {str(t): [x for r in results if r["report"]["task"] == t for x in r["lines"]] for t in TASKS}
    qa, edit = ([x for r in results if r["report"]["task"] == t for x in r["records"]] for t in TASKS)
    manifest = make_manifest(pools, seed, codes, n_qa, n_edit, [r["report"] for r in results], qa, edit)
    options = {
        "city": city,
        "seed": seed,
        "qa_per_relation": n_qa,
        "edit_per_relation": n_edit,
        "relations": relations,
        "pool_split": pool_split,
        "protocol": protocol,
        "unanswerable_share": unanswerable_share,
    }
    manifest["request"] = build_request(options, mapping)
    _describe_outputs(manifest, context, split, protocol, unanswerable_summary(share, qa + edit))
    manifest["options_only"] = manifest_record(cross_fitted(json.loads(x) for x in lines["qa"]))
    timing = {"extract_s": round(t_extract, 2), "build_s": round(t_build, 2)}
    _write_atomically(out, manifest, lines, context, force, timing)
    return {**manifest, "timing": timing}


def _read_pools(osm, vector, mapping, city, executor: Executor, reading: Reading | None) -> FeaturePools:
    """The feature pools of an OSM extract (read beside the executor's workers, a large one's
    cleaning on them) or of a vector file through its mapping."""
    if vector is None and mapping is None:
        return load_pools(osm, city, executor, reading)
    if vector is None or mapping is None or osm is not None:
        raise InputError("--vector and --mapping go together, and without --osm")
    from scoring.extract.vector import load_vector_pools

    return load_vector_pools(vector, mapping, city, reading)


def _describe_outputs(manifest: dict, context: str, split: dict, protocol: str, unanswerable: dict) -> None:
    """The manifest's records of the pool split, the protocol, the unanswerable variants (when
    some were asked for), how maps are framed, what context they draw and the modalities."""
    manifest["pool_split"] = split
    manifest["protocol"] = protocol
    if unanswerable["share"] > 0:
        manifest["unanswerable"] = unanswerable
    manifest["maps"] = {"frame": MAP_FRAME, "sets": MAP_SETS}
    manifest["context"] = {"rule": CONTEXT_RULE, "features": context.count("\n")}
    manifest["modalities"] = [str(m) for m in MODALITIES]  # each instance's answerable names them too


def _run_job(job, pools: FeaturePools | None = None):
    """A batch of slots, a shard to finish (scoring.build.shards), or a chunk of the context
    layer (scoring.build.context) to serialise."""
    if pools is None:
        raise RuntimeError("_run_job: no feature pools given to this worker")
    if isinstance(job, SlotBatch):
        return find_slots(job, pools)
    if isinstance(job, ShardFinish):
        return finish_shard(job, pools)
    return context_lines(job, pools)


def _map_shards(pools, shards, executor: Executor, progress) -> tuple[list, str]:
    """The shards' results in the shards' order, and the text of context.geojsonl."""
    # Results come back in the jobs' order, so the files do not depend on which worker finished
    # first; fork hands a local pool the feature pools without pickling them, and one pool serves
    # the three rounds (the workers keep the spatial indexes and anchor orders they drew).
    # Editing shards search for edits that hold with a margin and cost several times a QA shard:
    # their batches are dispatched first, so the cheap QA batches fill the gaps instead of
    # forming a tail.
    order = sorted(range(len(shards)), key=lambda i: shards[i].task != "edit")
    batches = _guided(shards, order)
    with executor.session(pools, start_method="fork"):
        done = executor.map(
            _run_job,
            [b for _, b in batches],
            shared=pools,
            desc="build",
            unit="slot",
            progress=progress,
            weights=[b.stop - b.first for _, b in batches],
        )
        found: dict[int, list[Found]] = {i: [] for i in range(len(shards))}
        for (i, _), part in zip(batches, list(done), strict=True):
            found[i].extend(part)
        finishing = [ShardFinish(s, tuple(found[i])) for i, s in enumerate(shards)]
        # a shard that may search again (a rescue walk) first, so that it does not end the build
        again = sorted(range(len(shards)), key=lambda i: not needs_rework(finishing[i]))
        results: list = [None] * len(shards)
        finished = executor.map(_run_job, [finishing[i] for i in again], shared=pools, desc="finish")
        for i, r in zip(again, list(finished), strict=True):
            results[i] = r
        # The context near the scenes only (issue 33 item 1), serialised in chunks on the executor
        # (no serial tail linear in what is kept).
        selection = join_selections(pools, [r.pop("context") for r in results])
        chunks = context_chunks(pools, selection)
        context = "".join(executor.map(_run_job, chunks, shared=pools, desc="context", start_method="fork"))
    return results, context


def _guided(shards: list[Shard], order: list[int]) -> list[tuple[int, SlotBatch]]:
    """(shard index, batch) in dispatch order: the shards dispatched while more than half of all
    slots are still to come go whole (a long one then has the rest to overlap with), the later
    ones in small batches (the build ends on short jobs, not on one long shard)."""
    total = left = sum(s.n for s in shards)
    out = []
    for i in order:
        whole = left - shards[i].n >= GUIDED_SHARE * total
        out += [(i, b) for b in slot_batches(shards[i], shards[i].n if whole else SLOTS_PER_BATCH)]
        left -= shards[i].n
    return out


def make_manifest(pools, seed, codes, n_qa, n_edit, reports, qa, edit) -> dict:
    import pyproj
    import shapely

    counts: dict = {}
    for r in reports:
        counts.setdefault(r["relation"], {})[r["task"]] = r["built"]
    shortfalls = [
        {k: r[k] for k in ("relation", "task", "requested", "built", "shortfall")}
        for r in reports
        if "shortfall" in r
    ]
    unanswerable = sum(1 for i in qa if not all(i["answerable"].values()))
    return {
        "format_version": format_version(pools),
        "tool": "spatialgap",
        "tool_version": __version__,
        "city": pools.city,
        "crs": pools.crs.as_dict(),
        "seed": seed,
        "requested": {"qa_per_relation": n_qa, "edit_per_relation": n_edit, "relations": codes},
        "counts": {"qa": len(qa), "edit": len(edit), "unanswerable_qa": unanswerable, "per_relation": counts},
        "shortfalls": shortfalls,
        "source": {
            "file": Path(pools.source).name,
            "sha256": pools.source_sha256,
            "pools": pools.counts(),
            "thresholds": pools.thresholds.as_dict(),
            "stats": pools.stats,
            "attribution": pools.stats.get("attribution", "Map data © OpenStreetMap contributors, ODbL 1.0"),
        },
        "versions": {
            "geos": shapely.geos_version_string,
            "shapely": shapely.__version__,
            "pyproj": pyproj.__version__,
            "proj": pyproj.proj_version_str,
            "gdal": gdal_version(),
            "reader": reader(),  # pyogrio or osgeo: the same pools (scoring.extract.pyogrio_read)
            "python": platform.python_version(),
        },
        "build_report": reports,
    }


def _check_protocol(protocol: str) -> str:
    try:
        return str(Protocol(protocol))
    except ValueError:
        raise InputError(f"unknown protocol {protocol!r} (expected {' or '.join(PROTOCOLS)})") from None


def _check_output(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: exists and is not a directory")
    if out.exists() and any(out.iterdir()) and not force:
        raise OutputError(f"{out}: exists and is not empty (use --force to replace it)")
    parent = out.resolve().parent
    if not parent.exists():
        try:
            parent.mkdir(parents=True)
        except OSError as exc:
            raise OutputError(f"{parent}: cannot create ({exc.strerror})") from None
    if not os.access(parent, os.W_OK):
        raise OutputError(f"{parent}: not writable")


def split_seconds(report: dict) -> dict:
    """A shard's seconds, taken out of its build report (where the manifest keeps the rest)."""
    return {"relation": report["relation"], "task": report["task"], "seconds": report.pop("seconds", None)}


def _write_atomically(
    out: Path, manifest: dict, lines: dict[str, list[str]], context: str, force: bool, timing: dict
) -> None:
    """Everything goes to a temporary directory beside `out`, then one rename: an interrupted
    build never leaves a directory that looks complete. What measures this machine (seconds)
    goes to timing.json, never the manifest: its bytes are the benchmark's identity, recorded by
    every run, so a rebuild of the same request must write the same ones."""
    timing = {**timing, "shards": [split_seconds(r) for r in manifest["build_report"]]}
    parent = out.resolve().parent
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=parent))
    except OSError as exc:
        raise OutputError(f"{parent}: cannot write ({exc.strerror})") from None
    try:
        files = {
            "qa.jsonl": "".join(line + "\n" for line in lines["qa"]),
            "edit.jsonl": "".join(line + "\n" for line in lines["edit"]),
            "context.geojsonl": context,
        }
        for name, text in files.items():
            write_atomic(tmp / name, text)
        manifest["files"] = {name: sha256_file(tmp / name) for name in sorted(files)}
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 is for the partial directory only
        write_json_atomic(tmp / "manifest.json", manifest, indent=1)
        write_atomic(tmp / "build_report.md", build_report_markdown(manifest))
        write_json_atomic(tmp / TIMING, timing, indent=1)
        if out.exists():
            if not force:
                raise OutputError(f"{out}: appeared while building")
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
