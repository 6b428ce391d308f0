"""``spatialgap frieda-score``: score FRIEDA files, print the table, record the judge's use."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scoring.errors import OutputError
from scoring.frieda.files import score_files
from scoring.frieda.published import RULE_SETS
from scoring.frieda.rules import ANSWER_TYPES
from scoring.frieda.stats import format_statistics


def format_table(summary: dict) -> str:
    """Compact text table: one row per file, accuracy per answer type, ours/original."""
    cols = ["all", *ANSWER_TYPES]
    header = f"{'model':<24} {'setting':<14}" + "".join(f"{c:>15}" for c in cols) + f"{'parsed':>8}"
    lines = [header, " " * 39 + "".join(f"{'ours/orig %':>15}" for _ in cols)]

    def cell(d: dict | None) -> str:
        if not d or not d.get("n"):
            return f"{'-':>15}"
        return f"{100 * d['accuracy']:>9.1f}/{100 * d['original_accuracy']:<5.1f}"

    rows = list(summary["files"].values()) + [dict(summary["overall"], model="ALL", setting="")]
    for e in rows:
        cells = [cell(e)] + [cell(e["by_answer_type"].get(t)) for t in ANSWER_TYPES]
        lines.append(
            f"{e['model']:<24} {e['setting']:<14}" + "".join(cells) + f"{100 * e['parse_rate']:>7.1f}%"
        )
    return "\n".join(lines)


def format_reproduction(summary: dict) -> str:
    """Under `--rules frieda`: agreement with the published verdicts per file and answer type, and
    every distance or cardinal record the rules do not reproduce."""
    kinds = ("distance", "cardinal", "textual")
    lines = [f"\nagreement with the records' own verdicts ({summary['rules']} rules), %:"]
    lines.append(f"{'file':<48}" + "".join(f"{k:>10}" for k in kinds))
    rows = [(name, e) for name, e in summary["files"].items()] + [("ALL", summary["overall"])]
    for name, e in rows:
        cells = []
        for k in kinds:
            t = e["by_answer_type"].get(k)
            cells.append(f"{100 * t['agreement']:>10.1f}" if t and t.get("n") else f"{'-':>10}")
        lines.append(f"{name:<48}" + "".join(cells))
    missed = summary["unreproduced"]
    lines.append(f"\n{len(missed)} distance/cardinal records not reproduced:")
    lines += [f"  {m['file']} {m['question_ref']} ({m['answer_type']}: {m['reason']})" for m in missed]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    judge = None
    if args.judge_model or args.judge_endpoint or args.judge_config:
        # the judge talks to a model through the runner's client: loaded only when asked for
        from scoring.frieda.judge import judge_from_args

        judge = judge_from_args(args)
    try:
        summary = score_files(args.files, args.out, judge, rules=args.rules)
    finally:
        if judge is not None:
            judge.close()
    if judge is not None:
        # The judge's use is part of the record: which model, how often, with which prompt.
        summary["judge"] = judge.public()
        try:
            (Path(args.out) / "summary.json").write_text(
                json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        except OSError as exc:
            raise OutputError(f"{Path(args.out) / 'summary.json'}: cannot write ({exc.strerror})") from None
    print(format_table(summary))
    if judge is not None:
        print(
            f"\njudge {judge.spec.name} ({judge.prompt}): {judge.calls} textual answers without an "
            f"exact match sent to it ({judge.requests} requests)"
        )
    print()
    print(format_statistics(summary["statistics"], args.mcnemar_verdicts))
    if "unreproduced" in summary:
        print(format_reproduction(summary))
    top = list(summary["overall"]["disagreements"].items())[:8]
    if top:
        print("\nmain disagreements with the original verdicts:")
        for cause, c in top:
            print(f"  {c['count']:>5}  {cause}  (e.g. {', '.join(map(str, c['examples'][:3]))})")
    print(f"\nwrote {Path(args.out) / 'verdicts.jsonl'} and {Path(args.out) / 'summary.json'}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "frieda-score",
        help="score FRIEDA free-form map answers and compare with the original verdicts",
        description="Score FRIEDA result files (JSON lists of records) with deterministic rules "
        "(distance within 20 % after unit conversion, cardinal +-1 on the 8-point rose, "
        "textual normalised set match) and compare with the original `correct` field.",
    )
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="FRIEDA result JSON files (or directories of them)"
    )
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="output directory")
    p.add_argument(
        "--rules",
        choices=RULE_SETS,
        default=RULE_SETS[0],
        help="spatialgap: our rules (default); frieda: the rules the published verdicts follow "
        "(first number of the last part, no unit conversion; exact label; set match), to score a new "
        "model's replies the way FRIEDA's published table was",
    )
    p.add_argument(
        "--mcnemar-verdicts",
        choices=("ours", "original"),
        default="ours",
        help="verdicts the printed McNemar pairs use (summary.json holds both; default: ours)",
    )
    p.add_argument(
        "--judge-model",
        metavar="NAME",
        help="optional judge model for textual answers without an exact match (its use is reported)",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--judge-config", type=Path, metavar="FILE", help="TOML model config holding --judge-model"
    )
    src.add_argument("--judge-endpoint", metavar="URL", help="OpenAI-compatible base URL of the judge")
    p.add_argument(
        "--judge-api-key-env", metavar="VAR", help="environment variable holding the judge's API key"
    )
    p.add_argument(
        "--judge-prompt",
        choices=("compare", "two-step"),
        default="compare",
        help="compare: one yes/no call; two-step: FRIEDA's procedure, extract the answer from the "
        "response, then compare it with the expected answer (default: compare)",
    )
    p.set_defaults(func=run)
