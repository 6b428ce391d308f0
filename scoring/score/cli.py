"""The scoring commands: score, report, selfcheck, gate. Thin wrappers over the library API."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _score(args) -> int:
    from scoring.score.results import score_runs

    summary = score_runs(
        args.bench, args.run, args.out, progress=not args.no_progress, only_recorded=args.only_recorded
    )
    overall = [c for c in summary["cells"] if c["level"] == "overall"]
    for c in overall:
        extra = (
            f"  raster-tolerant {100 * c['raster_tolerant_rate']:.1f}%"
            if c["raster_tolerant_rate"] is not None
            else ""
        )
        print(
            f"{c['model']:>16} {c['modality']:>8} {c['form']:>5}: {100 * c['accuracy']:5.1f}% "
            f"[{100 * c['ci_low']:.1f}-{100 * c['ci_high']:.1f}]  n={c['n']}  parse {100 * (c['parse_rate'] or 0):.1f}%  "
            f"errors {100 * c['error_rate']:.1f}%{extra}"
        )
    sc = summary["selfcheck"]
    print(f"{summary['samples']} samples scored -> {args.out}")
    if sc and not sc["passed"]:
        print(
            f"spatialgap score: warning: selfcheck FAILED ({len(sc['messages'])} drifted): {sc['messages'][0]}",
            file=sys.stderr,
        )
        return 1
    return 0


def _report(args) -> int:
    from scoring.score.report import write_report

    print(write_report(args.results, args.out))
    return 0


def _selfcheck(args) -> int:
    from scoring.score.selfcheck import fixture_size, run_selfcheck

    msgs = run_selfcheck()
    if msgs:
        for m in msgs:
            print(f"DRIFT: {m}", file=sys.stderr)
        print(f"spatialgap selfcheck: FAILED: {len(msgs)} drifted", file=sys.stderr)
        return 1
    print(f"selfcheck passed: {fixture_size()} samples and the fixture's figures as expected")
    return 0


def _gate(args) -> int:
    from scoring.score.gate import run_gate

    d = run_gate(args.results, args.thresholds, args.override_reason)
    for c in d["checks"]:
        print(f"{'ok     ' if c['passed'] else 'BLOCKED'} {c['rule']}: {json.dumps(c['cell'])} {c['why']}")
    if d["blocked"] and d["overridden"]:
        print(f"gate blocked, OVERRIDDEN (reason recorded): {d['override_reason']}")
        return 0
    if d["blocked"]:
        print("gate BLOCKED", file=sys.stderr)
        return 1
    print("gate passed")
    return 0


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
    p.set_defaults(func=_score)

    p = sub.add_parser(
        "report",
        help="write one self-contained HTML report of scored results",
        description="Tables and figures of one or more RESULTS directories in one HTML file.",
    )
    p.add_argument("results", nargs="+", type=Path, metavar="RESULTS")
    p.add_argument("--out", required=True, type=Path, metavar="HTML")
    p.set_defaults(func=_report)

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
        "overridden with a reason (recorded in RESULTS).",
    )
    p.add_argument("results", type=Path, metavar="RESULTS")
    p.add_argument("--thresholds", required=True, type=Path, metavar="FILE", help="TOML or JSON rules")
    p.add_argument("--override-reason", metavar="TEXT", help="pass a blocked gate, recording this reason")
    p.set_defaults(func=_gate)
