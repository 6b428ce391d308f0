"""`spatialgap run` and `spatialgap serve-agent` (registered through add_parser)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from scoring.answers.structured import ANSWER_FORMAT_CHOICES
from scoring.errors import InputError
from scoring.runner.agents import serve
from scoring.runner.config import OMITTABLE, ModelSpec, get_model
from scoring.runner.endpoints import endpoint_kinds
from scoring.runner.extract import extract_run
from scoring.runner.run import run_benchmark
from scoring.vocab import MODALITIES, QA_FORMS, TASKS


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "run",
        help="send a benchmark to a model endpoint (concurrent, resumable)",
        description="Send benchmark instances to a model and journal every response in RUN_DIR. "
        "Re-running with the same --out resumes: only missing or failed samples are sent.",
    )
    p.add_argument("--bench", required=True, type=Path, metavar="DIR", help="benchmark directory")
    add_model_options(p)
    p.add_argument("--modality", required=True, choices=MODALITIES, help="input type")
    p.add_argument("--task", required=True, choices=TASKS, help="qa or edit")
    p.add_argument("--form", choices=QA_FORMS, action="append", help="QA form (repeatable; default: both)")
    p.add_argument(
        "--out", required=True, type=Path, metavar="RUN_DIR", help="run directory (journal; resumes)"
    )
    p.add_argument("--limit", type=int, metavar="N", help="only the first N instances")
    p.add_argument("--ids", nargs="+", metavar="ID", help="only these instance ids")
    p.add_argument(
        "--cache",
        type=Path,
        action="append",
        default=[],
        metavar="JOURNAL",
        help="another run's predictions.jsonl to reuse identical requests from",
    )
    p.add_argument("--concurrency", type=int, metavar="N", help="override the model's concurrency")
    p.add_argument("--timeout", type=float, metavar="S", help="override the model's timeout_s")
    add_wait_option(p)
    add_generation_options(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_run)

    _add_extract_parser(subparsers)

    s = subparsers.add_parser(
        "serve-agent",
        help="serve a local agent as an OpenAI-compatible endpoint",
        description="Serve a built-in agent (e.g. chance) on loopback at "
        "http://HOST:PORT/v1 for `spatialgap run --endpoint`.",
    )
    s.add_argument(
        "--agent", required=True, metavar="NAME", help="built-in agent: tools, centroid, chance, ..."
    )
    s.add_argument("--port", type=int, default=8765, help="TCP port (0: a free port, printed on stderr)")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (loopback unless you mean otherwise)")
    s.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="processes computing replies (CPU-bound agents such as tools; default 1)",
    )
    s.set_defaults(func=cmd_serve_agent)


def _add_extract_parser(subparsers: argparse._SubParsersAction) -> None:
    x = subparsers.add_parser(
        "extract",
        help="ask an extractor model for the answers of replies the rules leave unparsed",
        description="For each run, send the QA replies the reading rules leave unparsed to an extractor "
        "model with one fixed prompt, and record its answers in RUN_DIR/extractions.jsonl; `score` then "
        "reads them (verdicts marked read_by: extractor). Re-running skips replies already extracted.",
    )
    x.add_argument("--bench", required=True, type=Path, metavar="DIR", help="benchmark directory")
    x.add_argument(
        "--run", required=True, action="append", type=Path, metavar="RUN_DIR", help="run (repeatable)"
    )
    add_model_options(x)
    x.add_argument("--concurrency", type=int, metavar="N", help="override the model's concurrency")
    x.add_argument("--timeout", type=float, metavar="S", help="override the model's timeout_s")
    add_wait_option(x)
    add_generation_options(x)
    x.set_defaults(func=cmd_extract)


def add_model_options(p: argparse.ArgumentParser) -> None:
    """The model to send to, as `spec_from_args` reads it: a --config entry or an --endpoint."""
    p.add_argument(
        "--model",
        required=True,
        metavar="NAME",
        help="model name in --config, or the endpoint's model id with --endpoint",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument("--config", type=Path, metavar="FILE", help="TOML model config ([models.NAME])")
    src.add_argument(
        "--endpoint",
        metavar="URL",
        help="OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1), no config needed",
    )
    p.add_argument(
        "--kind",
        choices=list(endpoint_kinds()),
        default=next(iter(endpoint_kinds())),
        help="endpoint protocol with --endpoint: "
        + "; ".join(f"{k.name}: {k.help}" for k in endpoint_kinds().values())
        + f" (default: {next(iter(endpoint_kinds()))})",
    )
    p.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key")


def add_wait_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-wait",
        type=float,
        metavar="S",
        help="override the model's max_wait_s: the most one sample waits in all on Retry-After "
        "and backoff before it is recorded as failed (default 300)",
    )


def add_generation_options(p: argparse.ArgumentParser) -> None:
    """Generation parameters, each settable or left out of the request (reasoning models reject
    temperature != 1 and want max_completion_tokens instead of max_tokens)."""
    p.add_argument("--temperature", type=float, metavar="T", help="sampling temperature (default 0)")
    p.add_argument("--max-tokens", type=int, metavar="N", help="max_tokens (default 1024)")
    p.add_argument(
        "--max-completion-tokens",
        type=int,
        metavar="N",
        help="send max_completion_tokens instead of max_tokens (o-series, GPT-5 family)",
    )
    p.add_argument("--seed", type=int, metavar="N", help="sampling seed (default 0)")
    p.add_argument(
        "--extra-body",
        metavar="JSON",
        help='request parameters merged into every body, e.g. \'{"reasoning_effort": "low"}\' '
        "(a model's extra_body; part of the request key)",
    )
    p.add_argument(
        "--answer-format",
        choices=ANSWER_FORMAT_CHOICES,
        help="QA answers as free text (default, the paper's) or a JSON object sent as structured "
        "output (a model's answer_format)",
    )
    p.add_argument(
        "--omit",
        metavar="PARAMS",
        help=f"comma-separated parameters not to send at all ({', '.join(OMITTABLE)})",
    )


def generation_overrides(args: argparse.Namespace) -> tuple[dict, list[str]]:
    """(parameters set on the command line, parameters to leave out)."""
    params = {
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "max_completion_tokens": args.max_completion_tokens,
        "seed": args.seed,
        "answer_format": getattr(args, "answer_format", None),
    }
    if getattr(args, "extra_body", None) is not None:
        try:
            params["extra_body"] = json.loads(args.extra_body)
        except ValueError as exc:
            raise InputError(f"--extra-body: not JSON ({exc})") from None
    omit = [o.strip() for o in (args.omit or "").split(",") if o.strip()]
    return {k: v for k, v in params.items() if v is not None}, omit


def apply_overrides(spec: ModelSpec, params: dict, omit: list[str]) -> ModelSpec:
    """``spec`` with command-line generation parameters set and ``omit`` ones left out."""
    bad = [o for o in omit if o not in OMITTABLE]
    if bad:
        raise InputError(f"--omit: cannot omit {bad[0]!r} (omittable: {', '.join(OMITTABLE)})")
    if "max_completion_tokens" in params and "max_tokens" not in params:
        params = {**params, "max_tokens": None}
    changes: dict[str, Any] = {**{o: None for o in omit}, **params}
    spec = replace(spec, **changes)
    spec.validate("options")
    return spec


def spec_from_args(args: argparse.Namespace) -> ModelSpec:
    if args.config:
        spec = get_model(args.config, args.model)
        if args.api_key_env:
            spec = replace(spec, api_key_env=args.api_key_env)
    elif args.endpoint:
        spec = ModelSpec.from_endpoint(args.endpoint, args.model, args.api_key_env, kind=args.kind)
    else:
        raise InputError("--model needs either --config FILE or --endpoint URL")
    if args.concurrency is not None:
        spec = replace(spec, concurrency=args.concurrency)
    if args.timeout is not None:
        spec = replace(spec, timeout_s=args.timeout)
    if getattr(args, "max_wait", None) is not None:
        spec = replace(spec, max_wait_s=args.max_wait)
    return apply_overrides(spec, *generation_overrides(args))


def cmd_run(args: argparse.Namespace) -> int:
    spec = spec_from_args(args)
    if args.task == "edit" and args.form:
        raise InputError("--form: only for --task qa")
    summary = run_benchmark(
        args.bench,
        spec,
        args.modality,
        args.task,
        args.form,
        args.out,
        progress=not args.no_progress,
        limit=args.limit,
        ids=args.ids,
        cache=args.cache,
    )
    if not getattr(args, "quiet", False):  # -q: errors only
        print(
            f"{summary.samples} samples: {summary.ok} ok, {summary.failed} failed "
            f"({summary.sent} sent, {summary.from_journal + summary.from_cache} reused) -> {args.out}",
            file=sys.stderr,
        )
    if summary.failed:
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(summary.failures.items()))
        print(f"failures ({kinds}); re-run the same command to retry them", file=sys.stderr)
        return 1
    return 0


def cmd_extract(args: argparse.Namespace) -> int:
    spec = spec_from_args(args)
    failed = 0
    for run_dir in args.run:
        done = extract_run(args.bench, run_dir, spec)
        failed += done.failed
        print(
            f"{run_dir}: {done.unread} replies unread by the rules: {done.sent} extracted now, "
            f"{done.reused} earlier, {done.failed} failed",
            file=sys.stderr,
        )
    return 1 if failed else 0


def cmd_serve_agent(args: argparse.Namespace) -> int:
    return serve(args.agent, args.host, args.port, args.workers)
