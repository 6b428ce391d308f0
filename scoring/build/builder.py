"""Stage 3 — feature pools -> scenes + oracle answers -> instances (`spatialgap build`).

Work is split into shards, one per (relation, task); every instance slot is a pure function of
(pools, seed, relation, task, slot index), so shards can run on any worker (scoring.execute: a
process pool or a Dask cluster) and the same input and seed give byte-identical files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import platform
import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from scoring import __version__
from scoring.build.build_report import build_report_markdown
from scoring.build.context import (
    CONTEXT_RULE,
    context_chunks,
    context_lines,
    join_selections,
    near_instances,
)
from scoring.build.sampling import EAGER_UP_TO, AnchorOrder, anchor_order, seed_for
from scoring.constraints.framing import MAP_FRAME
from scoring.errors import InputError, OutputError
from scoring.execute import Executor, LocalExecutor, add_executor_args, executor_from_args
from scoring.execute.base import Progress
from scoring.extract.osm import load_pools
from scoring.extract.pools import FeaturePools, split_pools, unsplit_record
from scoring.formats.mapsets import MAP_SETS
from scoring.relations import CATALOGUE
from scoring.relations.base import TOLERANCES, UNITS, BuildContext, QAItem
from scoring.relations.paper import apply_protocol
from scoring.relations.unanswerable import (
    DEFAULT_SHARE,
    add_unanswerable,
    check_share,
    unanswerable_summary,
)
from scoring.support.files import sha256_file, write_atomic, write_json_atomic
from scoring.vocab import MODALITIES, PROTOCOLS, TASKS, Protocol

log = logging.getLogger(__name__)

# 2: issue 29 (paper protocol items, nudge slack); 3: M02 editing keeps a pair its drawn band left
# no room for (the other band is taken); 4: issue 33, a pool of more than EAGER_UP_TO anchors in a
# lazy seeded order (scoring.build.sampling) instead of a whole shuffle, its rescue walk capped.
# A build whose pools are all smaller is format 3's, byte for byte, and says 3.
FORMAT_VERSION = 3
LAZY_FORMAT_VERSION = 4
FORMATS = (FORMAT_VERSION, LAZY_FORMAT_VERSION)  # what this builder writes


def format_version(pools: FeaturePools) -> int:
    """The format a build of `pools` is: 4 when some anchor pool is drawn lazily, else 3."""
    lazy = any(len(feats) > EAGER_UP_TO for task in TASKS for feats in pools.for_task(task).features.values())
    return LAZY_FORMAT_VERSION if lazy else FORMAT_VERSION


DEFAULT_PER_RELATION = 25
TRIES_PER_SLOT = 40
SCARCE_CLASS = 40  # fewer features of a kind in a task's pool: reported with a shortfall
CONSTRUCT_TRIES = 400  # anchors a slot's construction pass may look at
# anchors a shard's rescue walk may look at: a relation nothing in the pools can satisfy costs
# the same on a city and on a country, instead of one builder call per feature
RESCUE_TRIES = 4000


def dumps(obj) -> str:
    """Canonical JSON (sorted keys would scramble readable field order; we keep insertion order,
    which is deterministic, and forbid NaN)."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def build_slot(
    pools: FeaturePools,
    code: str,
    task: str,
    seed: int,
    k: int,
    n_slots: int,
    anchors: AnchorOrder | None = None,
    protocol: str = "spatialgap",
    seen: set[str] | None = None,
    spare: Iterator[int] | None = None,
) -> tuple[dict | None, int]:
    """Instance number k of (relation, task): (instance or None, attempts). A candidate whose
    key is in `seen` (an earlier slot's instance) is skipped like an invalid one. With `spare`
    (anchor indices shared by the slots of a rescue pass), the slot walks those instead."""
    rel = CATALOGUE[code]
    anchors = anchors if anchors is not None else anchor_order(pools, code, seed)
    if not anchors:
        return None, 0
    builder = rel.build_qa if task == "qa" else rel.build_edit
    tries = min(TRIES_PER_SLOT, max(len(anchors), 1))
    # Natural cases first; where a slot finds none, controlled constructions derived from real
    # features (recorded in provenance) for the relations that have them.
    attempts = 0
    for construct in (False, True) if rel.constructs and spare is None else (False,):
        # A construction pass looks further down the anchors: most refusals there are instant
        # (a road too short), and the few usable anchors may be far apart in the order.
        walk = (
            spare if spare is not None else range(min(CONSTRUCT_TRIES, len(anchors)) if construct else tries)
        )
        for j in walk:
            attempts += 1
            # (the construction pass walks every anchor from k: a stride of n_slots would visit
            # only the anchors congruent to k when n_slots divides their number)
            at = j if spare is not None else (k + j) if construct else (k + j * n_slots)
            anchor = anchors[at % len(anchors)]
            parts = (seed, pools.city, code, task, k, j) + (
                ("construct",) if construct else ("rescue",) if spare is not None else ()
            )
            rng = random.Random(seed_for(*parts))
            item = builder(BuildContext(pools, rng, protocol, construct), anchor)
            if item is not None:
                inst = to_instance(pools, code, task, k, item)
                prng = random.Random(seed_for(seed, pools.city, code, task, k, "protocol"))
                inst = apply_protocol(inst, protocol, prng, k)
                if seen is not None and instance_key(inst) in seen:
                    continue
                return inst, attempts
    return None, attempts


def instance_key(inst: dict) -> str:
    """Two instances with this key ask the same thing about the same scene."""
    return hashlib.sha256(
        dumps([inst["scene"], inst.get("question") or inst.get("instruction")]).encode()
    ).hexdigest()


def to_instance(pools: FeaturePools, code: str, task: str, k: int, item) -> dict:
    rel = CATALOGUE[code]
    head = {
        "id": f"{pools.city}-{task}-{code}-{k:03d}",
        "city": pools.city,
        "task": task,
        "relation": code,
        "family": rel.family,
        "crs": pools.crs.as_dict(),
        "scene": item.scene.to_geojson(),
    }
    info = item.information
    if isinstance(item, QAItem):
        answerable = item.answerable
        inst = {
            **head,
            "question": item.question,
            "answer_type": item.answer_type,
            "answer": item.answer,
            "unit": UNITS.get(item.answer_type),
            "tolerance": TOLERANCES.get(item.answer_type),
            "choices": item.choices,
            "correct_choice": item.correct_choice,
            "answerable": {m: answerable for m in MODALITIES},
            "information": info,
        }
    else:
        inst = {
            **head,
            "target": item.target,
            "instruction": item.instruction,
            "constraints": item.constraints,
            "allowed_operations": item.allowed_operations,
            "reference_edit": item.reference_edit,
            "information": info,
        }
    inst.update(
        {
            "facts": item.facts,
            "margin": item.margin,
            "provenance": {"source_sha256": pools.source_sha256, "features": item.provenance},
        }
    )
    return inst


# ---------------------------------------------------------------- shards

_POOLS: FeaturePools | None = None  # set in each worker (inherited through fork)


@dataclass(frozen=True)
class Shard:
    code: str
    task: str
    n: int
    seed: int
    protocol: str = "spatialgap"
    unanswerable_share: float = 0.0  # variants per answerable item (scoring.relations.unanswerable)


def run_shard(shard: Shard, pools: FeaturePools | None = None) -> dict:
    """The shard's instances, its report and the context features its maps may draw."""
    whole = pools or _POOLS
    if whole is None:
        raise RuntimeError("run_shard: no feature pools given or loaded in this worker")
    pools = whole.for_task(shard.task)  # QA and editing draw from separate pools
    rel = CATALOGUE[shard.code]
    missing = [k for k in rel.needs if not pools.features.get(k)]
    absent = None if missing or rel.requires is None else rel.requires(pools)
    t0 = time.perf_counter()
    instances: list[dict] = []
    attempts = 0
    if not missing and not absent:
        instances, attempts = _fill_slots(pools, shard)
    failed = shard.n - len(instances) if not missing and not absent else 0
    out = _shard_result(shard, pools, instances, attempts, failed, missing, absent, time.perf_counter() - t0)
    out["context"] = near_instances(whole, out["instances"])  # from the whole city, both halves
    return out


def _fill_slots(pools: FeaturePools, shard: Shard) -> tuple[list[dict], int]:
    """The shard's instances in slot order, and the candidates tried."""
    anchors = anchor_order(pools, shard.code, shard.seed)
    seen: set[str] = set()
    slots: dict[int, dict] = {}
    attempts = 0
    for k in range(shard.n):
        inst, tries = build_slot(
            pools, shard.code, shard.task, shard.seed, k, shard.n, anchors, shard.protocol, seen
        )
        attempts += tries
        if inst is None or instance_key(inst) in seen:
            continue
        seen.add(instance_key(inst))
        slots[k] = inst
    # Slots that found nothing among their own anchors (a stride of n visits only one residue
    # class) walk the first anchors, under their own rng, once for all of them (T04 editing fell 1
    # short on Helsinki under seed 90417 while other anchors held valid candidates).
    spare = iter(range(len(anchors) if anchors.eager else min(len(anchors), RESCUE_TRIES)))
    for k in (k for k in range(shard.n) if k not in slots):
        inst, tries = build_slot(
            pools, shard.code, shard.task, shard.seed, k, shard.n, anchors, shard.protocol, seen, spare
        )
        attempts += tries
        if inst is not None and instance_key(inst) not in seen:
            seen.add(instance_key(inst))
            slots[k] = inst
    return [slots[k] for k in sorted(slots)], attempts


def _shard_result(shard, pools, instances, attempts, failed, missing, absent, seconds) -> dict:
    """The shard's instances (with their unanswerable variants) and its build report."""
    report = {
        "relation": shard.code,
        "task": shard.task,
        "requested": shard.n,
        "built": len(instances),
        "attempts": attempts,
        "seconds": round(seconds, 3),
    }
    if missing:
        report["shortfall"] = f"the extract has no usable {', '.join(missing)} features"
    elif absent:
        report["shortfall"] = f"the extract has no {absent}"
    elif len(instances) < shard.n:
        shortfall = (
            f"only {len(instances)} of {shard.n} candidates passed the margins "
            f"and checks ({failed} slots found no valid candidate)"
        )
        # name the feature classes this task's pool has too few of (Paris: 3 buildings)
        none = [k for k, v in pools.features.items() if not v]
        few = [f"{len(v)} {k}" for k, v in pools.features.items() if 0 < len(v) < SCARCE_CLASS]
        if none or few:
            said = ([f"no {' or '.join(none)}"] if none else []) + ([f"only {', '.join(few)}"] if few else [])
            shortfall += f"; the extract has {' and '.join(said)} features for this task"
        report["shortfall"] = shortfall
    constructed = sum(
        1
        for i in instances
        if any(f["origin"] == "constructed" for f in i["provenance"]["features"].values())
    )
    report["constructed"] = constructed
    if shard.unanswerable_share > 0:  # after the answerable items, which they leave untouched
        extra = add_unanswerable(instances, seed=shard.seed, share=shard.unanswerable_share)
        report["unanswerable"] = len(extra)
        instances = instances + extra
    return {"instances": instances, "report": report}


def _init_worker(pools):
    global _POOLS
    _POOLS = pools


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
    if vector is not None or mapping is not None:
        if vector is None or mapping is None or osm is not None:
            raise InputError("--vector and --mapping go together, and without --osm")
        from scoring.extract.vector import load_vector_pools

        pools = load_vector_pools(vector, mapping, city)
    else:
        executor = executor or LocalExecutor(jobs)
        pools = load_pools(osm, city, executor)  # a large extract's cleaning runs on it too
    split = split_pools(pools) if pool_split else unsplit_record(pools)
    t_extract = time.perf_counter() - t0
    codes = relations or sorted(CATALOGUE)
    unknown = [c for c in codes if c not in CATALOGUE]
    if unknown:
        raise CATALOGUE.unknown(unknown[0])
    per_task = (("qa", n_qa), ("edit", n_edit))
    shards = [Shard(c, t, n, seed, protocol, share) for c in codes for t, n in per_task if n > 0]
    results, context = _map_shards(pools, shards, executor or LocalExecutor(jobs), progress)
    t_build = time.perf_counter() - t0 - t_extract

    qa = [i for r in results if r["report"]["task"] == "qa" for i in r["instances"]]
    edit = [i for r in results if r["report"]["task"] == "edit" for i in r["instances"]]
    reports = [r["report"] for r in results]
    manifest = make_manifest(pools, seed, codes, n_qa, n_edit, reports, qa, edit)
    manifest["pool_split"] = split
    manifest["protocol"] = protocol
    if share > 0:
        manifest["unanswerable"] = unanswerable_summary(share, qa + edit)
    _describe_outputs(manifest, context)
    manifest["timing"] = {"extract_s": round(t_extract, 2), "build_s": round(t_build, 2)}
    _write_atomically(out, manifest, qa, edit, context, force)
    return manifest


def _describe_outputs(manifest: dict, context: str) -> None:
    """The manifest's records of how maps are framed, what context they draw and the modalities."""
    manifest["maps"] = {"frame": MAP_FRAME, "sets": MAP_SETS}
    manifest["context"] = {"rule": CONTEXT_RULE, "features": context.count("\n")}
    manifest["modalities"] = [str(m) for m in MODALITIES]  # each instance's answerable names them too


def _run_job(job, pools: FeaturePools | None = None):
    """A shard, or a chunk of the context layer (scoring.build.context) to serialise."""
    if isinstance(job, Shard):
        return run_shard(job, pools)
    pools = pools or _POOLS
    if pools is None:
        raise RuntimeError("_run_job: no feature pools given or loaded in this worker")
    return context_lines(job, pools)


def _map_shards(pools, shards, executor: Executor, progress) -> tuple[list, str]:
    """The shards' results in the shards' order, and the text of context.geojsonl."""
    # Results come back in the shards' order, so the files do not depend on which worker
    # finished first; fork hands a local pool the feature pools without pickling them.
    # Editing shards search for edits that hold with a margin and cost several times a QA shard:
    # they are dispatched first, so the cheap QA shards fill the gaps instead of forming a tail.
    order = sorted(range(len(shards)), key=lambda i: shards[i].task != "edit")
    jobs = [shards[i] for i in order]
    done = executor.map(_run_job, jobs, shared=pools, desc="build", progress=progress, start_method="fork")
    results: list = [None] * len(shards)
    for i, r in zip(order, list(done), strict=True):
        results[i] = r
    # The context near the scenes only (issue 33 item 1), serialised in chunks on the executor
    # (no serial tail linear in what is kept).
    selection = join_selections(pools, [r.pop("context") for r in results])
    chunks = context_chunks(pools, selection)
    context = "".join(executor.map(_run_job, chunks, shared=pools, desc="context", start_method="fork"))
    return results, context


def make_manifest(pools, seed, codes, n_qa, n_edit, reports, qa, edit) -> dict:
    import pyproj
    import shapely
    from osgeo import gdal

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
            "gdal": gdal.__version__,
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


def _write_atomically(out: Path, manifest: dict, qa: list, edit: list, context: str, force: bool) -> None:
    """Everything goes to a temporary directory beside `out`, then one rename: an interrupted
    build never leaves a directory that looks complete."""
    parent = out.resolve().parent
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=parent))
    except OSError as exc:
        raise OutputError(f"{parent}: cannot write ({exc.strerror})") from None
    try:
        files = {
            "qa.jsonl": "".join(dumps(i) + "\n" for i in qa),
            "edit.jsonl": "".join(dumps(i) + "\n" for i in edit),
            "context.geojsonl": context,
        }
        for name, text in files.items():
            write_atomic(tmp / name, text)
        manifest["files"] = {name: sha256_file(tmp / name) for name in sorted(files)}
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 is for the partial directory only
        write_json_atomic(tmp / "manifest.json", manifest, indent=1)
        write_atomic(tmp / "build_report.md", build_report_markdown(manifest))
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


# ---------------------------------------------------------------- CLI


def add_parser(sub) -> None:
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
    with executor_from_args(args, args.jobs) as executor:
        return _build_then_render(args, executor)


def _build_then_render(args: argparse.Namespace, executor: Executor) -> int:
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
