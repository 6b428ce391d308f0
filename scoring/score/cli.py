"""The scoring commands: score, report, selfcheck, gate. Thin wrappers over the library API."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scoring.errors import InputError
from scoring.execute import add_executor_args, executor_from_args
from scoring.score.gate import (
    MIN_PAST_RESULTS,
    list_overrides,
    propose_thresholds,
    run_gate,
    write_thresholds,
)
from scoring.score.results import score_runs
from scoring.score.selfcheck import fixture_size, run_selfcheck
from scoring.support.lock import lock_output


def _score(args: argparse.Namespace) -> int:
    with executor_from_args(args, jobs=1) as executor:
        summary = score_runs(
            args.bench,
            args.run,
            args.out,
            progress=not args.no_progress,
            only_recorded=args.only_recorded,
            executor=executor,
        )
    overall = [c for c in summary["cells"] if c["level"] == "overall"]
    width = max([8, *(len(str(c["modality"])) for c in overall)])  # image-context is 13 wide
    for c in overall:
        extra = (
            f"  raster-tolerant {100 * c['raster_tolerant_rate']:.1f}%"
            if c["raster_tolerant_rate"] is not None
            else ""
        )
        measure = "strict CSR" if c["form"] == "edit" else "accuracy"
        print(
            f"{c['model']:>16} {c['modality']:>{width}} {c['form']:>5}: "
            f"{measure} {100 * c['accuracy']:5.1f}% "
            f"[{100 * c['ci_low']:.1f}-{100 * c['ci_high']:.1f}]  n={c['n']}  "
            f"parse {100 * (c['parse_rate'] or 0):.1f}%  errors {100 * c['error_rate']:.1f}%{extra}"
        )
    for x in summary.get("extractor") or []:
        print(
            f"{x['model']:>16} extractor read {x['read_by_extractor']} replies the rules left unparsed: "
            f"{100 * (x['accuracy_rules_only'] or 0):.1f}% by the rules alone, "
            f"{100 * (x['accuracy_assisted'] or 0):.1f}% assisted"
        )
    selfcheck = summary["selfcheck"]
    protocol = summary["benchmark"].get("protocol", "spatialgap")
    print(f"{summary['samples']} samples scored (protocol {protocol}) -> {args.out}")
    if selfcheck and not selfcheck["passed"]:
        drifted = len(selfcheck["messages"])
        print(
            f"spatialgap score: warning: selfcheck FAILED ({drifted} drifted): {selfcheck['messages'][0]}",
            file=sys.stderr,
        )
        return 1
    return 0


def _report(args: argparse.Namespace) -> int:
    from scoring.browse import BROWSER_NAME, write_browser
    from scoring.score.report import parse_labels, write_report  # matplotlib: loaded only to draw

    labels = parse_labels(args.label)
    # one report at a time into its folder: its page, tables, figures and browser belong together
    with lock_output(Path(args.out).parent, "report"):
        report = write_report(
            args.results, args.out, csv=not args.no_csv, mcnemar_rule=args.mcnemar, labels=labels
        )
        write_browser(args.results, report.with_name(BROWSER_NAME))  # the report links to it
    print(report)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from scoring.score.compare import leaderboard, leaderboard_text, write_leaderboard
    from scoring.score.report import parse_labels

    board = leaderboard(args.results, labels=parse_labels(args.label))
    print(leaderboard_text(board))
    if args.out:
        for path in write_leaderboard(board, args.out):
            print(path)
    return 0


def _selfcheck(args: argparse.Namespace) -> int:
    msgs = run_selfcheck()
    if msgs:
        for m in msgs:
            print(f"DRIFT: {m}", file=sys.stderr)
        print(f"spatialgap selfcheck: FAILED: {len(msgs)} drifted", file=sys.stderr)
        return 1
    print(f"selfcheck passed: {fixture_size()} samples and the fixture's figures as expected")
    return 0


def _gate(args: argparse.Namespace) -> int:
    if args.propose:
        return _gate_propose(args)
    if args.overrides:
        for o in list_overrides(args.results):
            blocked = "; ".join(f"{c['rule']} {json.dumps(c['cell'])} {c['why']}" for c in o["blocked"])
            print(f"{o['time']} {o['results']} by {o['by']}: {o['reason']}  [passed over: {blocked}]")
        return 0
    if len(args.results) != 1 or args.thresholds is None:
        raise InputError("gate: give one RESULTS and --thresholds FILE (or --propose / --overrides)")
    d = run_gate(args.results[0], args.thresholds, args.override_reason)
    for c in d["checks"]:
        print(f"{'ok     ' if c['passed'] else 'BLOCKED'} {c['rule']}: {json.dumps(c['cell'])} {c['why']}")
    if d["refused"]:
        print("gate BLOCKED: the results' selfcheck did not pass (no override possible)", file=sys.stderr)
        return 1
    if d["blocked"] and d["overridden"]:
        print(f"gate blocked, OVERRIDDEN (reason recorded): {d['override_reason']}")
        return 0
    if d["blocked"]:
        print("gate BLOCKED", file=sys.stderr)
        return 1
    print("gate passed")
    return 0


def _gate_propose(args: argparse.Namespace) -> int:
    if args.out is None:
        raise InputError("gate --propose: --out FILE is required")
    rules = propose_thresholds(
        args.results, allowed_regression=args.allowed_regression, metrics=tuple(args.metric or ["accuracy"])
    )
    header = (
        f"Proposed by `spatialgap gate --propose` from {len(args.results)} past results:\n"
        f"min = median over the results - {args.allowed_regression} (cells present in >= {MIN_PAST_RESULTS})."
    )
    print(f"{len(rules)} rules -> {write_thresholds(args.out, rules, header)}")
    return 0


# long: one declaration per option, each with its help; split, they would only be harder to scan
def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="score recorded runs against a benchmark (offline, deterministic)",
        description="Turn runs' recorded responses into per-sample verdicts "
        "(RESULTS/verdicts.jsonl) and summary tables (summary.csv, summary.json).",
    )
    p.add_argument("--bench", required=True, type=Path, metavar="DIR", help="benchmark directory")
    p.add_argument(
        "--run",
        required=True,
        action="append",
        type=Path,
        metavar="RUN_DIR",
        help="run directory (repeatable)",
    )
    p.add_argument("--out", required=True, type=Path, metavar="RESULTS", help="results directory")
    p.add_argument(
        "--only-recorded",
        action="store_true",
        help="score only samples the runs recorded (default: every benchmark sample in the run's "
        "task and forms; missing ones count as errors)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_executor_args(p)
    p.set_defaults(func=_score)

    p = sub.add_parser(
        "report",
        help="write one self-contained HTML report of scored results",
        description="Tables and figures of one or more RESULTS directories in one HTML file, "
        "with the tables as CSV files beside it.",
    )
    p.add_argument("results", nargs="+", type=Path, metavar="RESULTS", help="results directories")
    p.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="HTML",
        help="report file (browser.html is written beside it)",
    )
    p.add_argument(
        "--mcnemar",
        choices=("exact", "frieda"),
        default="exact",
        help="paired test rule: exact binomial (default) or FRIEDA's (exact below 50 discordant "
        "pairs, chi-square with continuity correction from 50)",
    )
    p.add_argument("--no-csv", action="store_true", help="write the HTML only")
    p.add_argument(
        "--label",
        action="append",
        metavar="DIR=NAME",
        help="name the models of RESULTS DIR MODEL@NAME (repeatable): two sweeps of one model are "
        "then two rows, with paired tests on their shared samples",
    )
    p.set_defaults(func=_report)

    p = sub.add_parser(
        "compare",
        help="leaderboard: models x headline cells across results directories",
        description="One row per model (MODEL@NAME for a labelled RESULTS), one column per headline "
        "cell (the report's Table 1 names: `geojson open`, `image edit raster-tolerant`, "
        "`image edit strict CSR`, ...), rows by GeoJSON open QA.",
    )
    p.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="RESULTS",
        help="results directories (score or evaluate outputs)",
    )
    p.add_argument("--label", action="append", metavar="DIR=NAME", help="as for report (repeatable)")
    p.add_argument(
        "--out", type=Path, metavar="CSV", help="also write the leaderboard as CSV (and .tex beside)"
    )
    p.set_defaults(func=_compare)

    p = sub.add_parser(
        "selfcheck",
        help="score the frozen fixture and fail on any drift",
        description="Score the committed fixture (resources/selfcheck/) and compare every "
        "verdict and figure with the expected ones.",
    )
    p.set_defaults(func=_selfcheck)

    p = sub.add_parser(
        "gate",
        help="release gate on chosen summary cells",
        description="Check summary cells against thresholds; exits 1 when blocked unless "
        "overridden with a reason (recorded in RESULTS). Results whose selfcheck did not pass are "
        "refused. --propose derives thresholds from past results; --overrides lists past overrides.",
    )
    p.add_argument("results", nargs="+", type=Path, metavar="RESULTS", help="results directories")
    p.add_argument("--thresholds", type=Path, metavar="FILE", help="TOML or JSON rules")
    p.add_argument("--override-reason", metavar="TEXT", help="pass a blocked gate, recording this reason")
    p.add_argument(
        "--propose",
        action="store_true",
        help=f"write a thresholds file from at least {MIN_PAST_RESULTS} past RESULTS (with --out)",
    )
    p.add_argument("--out", type=Path, metavar="FILE", help="--propose: the thresholds file to write")
    p.add_argument(
        "--allowed-regression",
        type=float,
        default=0.05,
        metavar="X",
        help="--propose: floor = median of past results - X (a fraction; default 0.05 = 5 points)",
    )
    p.add_argument(
        "--metric",
        action="append",
        metavar="NAME",
        help="--propose: metric to put a floor under (repeatable; default accuracy)",
    )
    p.add_argument("--overrides", action="store_true", help="list the overrides recorded in RESULTS...")
    p.set_defaults(func=_gate)
