"""`spatialgap evaluate`: the command line of the sweep, and its one-screen summary."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from scoring.errors import InputError
from scoring.evaluate import startup
from scoring.evaluate.plan import (
    AGENT_MODALITIES,
    DEFAULT_AGENTS,
    DEFAULT_PER_RELATION,
    SweepPlan,
    cities_from_osm,
    city_from_bench,
    load_cities,
    participants,
)
from scoring.execute import add_executor_args, executor_from_args
from scoring.runner.config import ModelSpec, get_model
from scoring.support.files import read_jsonl
from scoring.support.lock import lock_output
from scoring.support.process import fewer_collections, keep_freed_memory, quiet_resource_tracker
from scoring.vocab import BASE_MODALITIES, MODALITIES, PROTOCOLS, TASKS, Form, Modality, Protocol, Task


# long: one declaration per option, each with its help; split, they would only be harder to scan
def add_parser(sub) -> None:
    p = sub.add_parser(
        "evaluate",
        help="the whole benchmark in one command: build, run models and agents, score, report",
        description="Build each city's benchmark (default: the embedded Helsinki extract), run every "
        "configured model and built-in agent over every task and modality it can read, score "
        "the runs and write OUT/report.html. Re-running resumes: benchmarks and finished "
        "requests are reused.",
    )
    p.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="output directory: bench/, runs/, results/, report.html, browser.html",
    )
    p.add_argument("--config", type=Path, metavar="FILE", help="models.toml ([models.NAME] tables)")
    p.add_argument(
        "--extractor",
        metavar="MODEL",
        help="an extractor model asked, after the runs, about the replies the reading rules leave "
        "unparsed (a [models.NAME] of --config, or the model at --extractor-endpoint)",
    )
    p.add_argument("--extractor-endpoint", metavar="URL", help="the --extractor model's base URL")
    p.add_argument(
        "--model",
        action="extend",
        nargs="+",
        default=[],
        metavar="NAME",
        help="models of --config to run (default: all of them)",
    )
    p.add_argument(
        "--agents",
        help=f"comma-separated built-in agents, or 'none' (default: {','.join(DEFAULT_AGENTS)} "
        "without --config, none with it)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--cities", type=Path, metavar="FILE", help="cities.toml ([cities.NAME] tables)")
    where.add_argument(
        "--osm",
        action="append",
        default=[],
        metavar="FILE",
        help="an .osm.pbf or .osm extract (repeatable; default: the embedded Helsinki extract)",
    )
    where.add_argument(
        "--bench",
        type=Path,
        metavar="DIR",
        help="a pre-built benchmark (spatialgap build) or export (spatialgap export), used as it is: "
        "no source extract needed; its missing maps are drawn into it",
    )
    p.add_argument("--city", help="the city's name (one --osm file only)")
    p.add_argument("--seed", type=int, default=0, help="benchmark seed (same seed, same benchmark)")
    p.add_argument(
        "--protocol",
        choices=list(PROTOCOLS),
        default=str(Protocol.SPATIALGAP),
        help="benchmark protocol: spatialgap (default, our own choices) or paper (GeoSpatialBench's)",
    )
    p.add_argument("--qa", type=int, default=DEFAULT_PER_RELATION, help="QA instances per relation")
    p.add_argument("--edit", type=int, default=DEFAULT_PER_RELATION, help="editing instances per relation")
    p.add_argument(
        "--modalities",
        default=",".join(BASE_MODALITIES),
        help=f"comma-separated, of {', '.join(MODALITIES)} (default: the first three; the cross-map "
        "ones draw extra maps)",
    )
    p.add_argument("--tasks", default=",".join(TASKS), help="comma-separated tasks: qa, edit")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N instances per run")
    p.add_argument("--jobs", type=int, help="worker processes for build and render (default: all cores)")
    p.add_argument(
        "--agent-workers",
        type=int,
        metavar="N",
        help="processes each served agent computes replies in (default: 1; the built-in agents "
        "take a few milliseconds a reply)",
    )
    p.add_argument("--force", action="store_true", help="rebuild the benchmarks even if they exist")
    add_executor_args(p)
    p.add_argument(
        "--no-progress", action="store_true", help="no progress bars (off anyway when stderr is no terminal)"
    )
    p.add_argument(
        "--estimate",
        action="store_true",
        help="print the requests, estimated tokens and cost per participant x input type x task, "
        "from the prompts themselves, and exit without sending anything",
    )
    p.set_defaults(func=_cli)


def _split(value: str, allowed: tuple[str, ...] | None, what: str, empty_ok: bool = False) -> tuple[str, ...]:
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    if empty_ok and items in ((), ("none",)):
        return ()
    if not items:
        raise InputError(f"--{what}: give at least one")
    if allowed:
        bad = [v for v in items if v not in allowed]
        if bad:
            raise InputError(f"--{what}: unknown {bad[0]!r} (expected {', '.join(allowed)})")
    return items


def plan_from_args(args: argparse.Namespace) -> SweepPlan:
    agents_arg = (
        args.agents if args.agents is not None else ("none" if args.config else ",".join(DEFAULT_AGENTS))
    )
    agents = _split(agents_arg, tuple(AGENT_MODALITIES), "agents", empty_ok=True)
    who = participants(
        agents, args.config, tuple(dict.fromkeys(args.model)), check_keys=not getattr(args, "estimate", False)
    )
    for n in ("qa", "edit", "seed"):
        if getattr(args, n) < 0:
            raise InputError(f"--{n}: must be >= 0")
    if args.bench:
        if args.city or args.force:
            raise InputError(
                f"--{'city' if args.city else 'force'}: not with --bench (the benchmark is used as it is)"
            )
        cities, single = [city_from_bench(args.bench, args.out)], True
    elif args.cities:
        if args.city:
            raise InputError("--city: the cities file names its cities")
        cities, single = load_cities(args.cities, args.out, args.seed, args.qa, args.edit), False
    else:
        cities, single = cities_from_osm(args.osm, args.out, args.city, args.seed, args.qa, args.edit)
    if not args.bench:
        cities = [dataclasses.replace(c, protocol=args.protocol) for c in cities]
    return SweepPlan(
        out=args.out,
        cities=cities,
        participants=who,
        modalities=_split(args.modalities, MODALITIES, "modalities"),
        tasks=_split(args.tasks, TASKS, "tasks"),
        jobs=args.jobs,
        force=args.force,
        limit=args.limit,
        progress=not args.no_progress,
        agent_workers=args.agent_workers,
        single=single,
        extractor=_extractor(args),
    )


def _extractor(args: argparse.Namespace) -> ModelSpec | None:
    """The --extractor model: a [models.NAME] of --config, or a model at --extractor-endpoint."""
    name = getattr(args, "extractor", None)
    if not name:
        if getattr(args, "extractor_endpoint", None):
            raise InputError("--extractor-endpoint: needs --extractor MODEL")
        return None
    if args.extractor_endpoint:
        return ModelSpec.from_endpoint(args.extractor_endpoint, name)
    if not args.config:
        raise InputError(
            "--extractor: give --config FILE (a [models.NAME] block) or --extractor-endpoint URL"
        )
    return get_model(args.config, name)


def _cli(args: argparse.Namespace) -> int:
    plan = plan_from_args(args)
    if args.estimate:
        from scoring.evaluate.estimate import estimate_screen, estimate_sweep

        print(estimate_screen(plan, estimate_sweep(plan)))
        return 0
    keep_freed_memory()  # every map request builds and frees half-megabyte buffers
    quiet_resource_tracker()  # no multiprocessing warning below the last line after a Ctrl-C
    fewer_collections()
    try:
        # one sweep at a time per --out: a second one would rebuild and resume under the first
        with lock_output(plan.out, "evaluate"), executor_from_args(args, args.jobs) as executor:
            # The agents, the render and the scorer start loading before this process loads the
            # sweep (1.4 CPU-s of imports): both cores work from the first second.
            started = startup.start(plan, executor.distributed)
            try:
                from scoring.evaluate.sweep import evaluate
            except BaseException:
                started.abandon()
                raise
            rec = evaluate(plan, executor, started)
    except KeyboardInterrupt:
        print(
            "spatialgap evaluate: interrupted; every finished request is journaled: "
            "re-run the same command to resume",
            file=sys.stderr,
        )
        return 130
    print(summary_screen(plan, rec))
    if rec["stopped"]:
        return 3
    return 1 if rec["failed_samples"] else 0


def summary_screen(plan: SweepPlan, rec: dict) -> str:
    """Participants x headline cells (scoring.score.headline: the names and values of the report's
    Table 1 over every city, "not run" where the participant cannot read the input type); then
    what stopped or failed, and where the report is."""
    from scoring.score.headline import cell_name, headline_cells, pct_text

    rows = [v for results in rec["results"] for _, v in read_jsonl(Path(results) / "verdicts.jsonl")]
    cells = headline_cells(rows) if rows else {}
    names = []
    for m in plan.modalities:
        for t in plan.tasks:
            if t == Task.EDIT:
                if Modality(m).pixel_edits:
                    names.append((m, cell_name(m, Form.EDIT, raster=True)))
                names.append((m, cell_name(m, Form.EDIT)))
            else:
                names += [(m, cell_name(m, f)) for f in (Form.OPEN, Form.MCQ)]
    width = max(12, *(len(p.name) + 2 for p in plan.participants))
    cols = [max(9, len(n)) + 2 for _, n in names]  # each as wide as its name
    lines = [f"{'':<{width}}" + "".join(f"{n:>{w}}" for (_, n), w in zip(names, cols, strict=True))]
    for p in plan.participants:
        row = f"{p.name:<{width}}"
        for (m, name), w in zip(names, cols, strict=True):
            cell = cells.get(p.name, {}).get(name)
            text = "not run" if m not in p.modalities or cell is None else pct_text(cell)
            row += f"{text:>{w}}"
        lines.append(row)
    secs = rec["seconds"]
    lines.append(
        f"{len(rec['runs'])} runs over {len(plan.cities)} cit{'y' if len(plan.cities) == 1 else 'ies'} "
        f"in {secs['total']:.0f} s (prepare {secs['prepare']:.0f} s, maps {secs['render']:.0f} s in "
        f"parallel, runs {secs['runs']:.0f} s, scoring {secs['score']:.0f} s, report {secs['report']:.0f} s)"
    )
    for name, why in rec["stopped"].items():
        lines.append(f"STOPPED {name}: {why}")
    if rec["failed_samples"]:
        failed = ", ".join(f"{k} {v}" for k, v in rec["failed_samples"].items())
        lines.append(f"failed requests (re-run the same command to retry them): {failed}")
    lines.append(f"report: {rec['report']}")
    lines.append(f"verdicts: {', '.join(rec['results'])}")
    return "\n".join(lines)
