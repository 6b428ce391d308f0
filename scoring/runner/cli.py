"""`spatialgap run` and `spatialgap serve-agent` (registered through add_parser).

Also runnable on its own: ``python -m scoring.runner.cli run ...``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from scoring.errors import InputError


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "run",
        help="send a benchmark to a model endpoint (concurrent, resumable)",
        description="Send benchmark instances to a model and journal every response in RUN_DIR. "
        "Re-running with the same --out resumes: only missing or failed samples are sent.",
    )
    p.add_argument("--bench", required=True, type=Path, metavar="DIR", help="benchmark directory")
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
        choices=("openai", "ollama"),
        default="openai",
        help="endpoint protocol with --endpoint (default: openai)",
    )
    p.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key")
    p.add_argument("--modality", required=True, choices=("geojson", "image", "together"))
    p.add_argument("--task", required=True, choices=("qa", "edit"))
    p.add_argument(
        "--form", choices=("open", "mcq"), action="append", help="QA form (repeatable; default: both)"
    )
    p.add_argument("--out", required=True, type=Path, metavar="RUN_DIR")
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
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_run)

    s = subparsers.add_parser(
        "serve-agent",
        help="serve a local agent as an OpenAI-compatible endpoint",
        description="Serve a built-in agent (e.g. chance) on loopback at "
        "http://HOST:PORT/v1 for `spatialgap run --endpoint`.",
    )
    s.add_argument("--agent", required=True, metavar="NAME")
    s.add_argument("--port", type=int, default=8765, help="TCP port (0: a free port, printed on stderr)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="processes computing replies (CPU-bound agents such as tools; default 1)",
    )
    s.set_defaults(func=cmd_serve_agent)


def spec_from_args(args):
    from dataclasses import replace

    from scoring.runner.config import ModelSpec, get_model

    if args.config:
        spec = get_model(args.config, args.model)
        if args.api_key_env:
            spec = replace(spec, api_key_env=args.api_key_env)
    elif args.endpoint:
        spec = ModelSpec.from_endpoint(args.endpoint, args.model, args.api_key_env, kind=args.kind)
    else:
        raise InputError("--model needs either --config FILE or --endpoint URL")
    overrides = {}
    if args.concurrency is not None:
        overrides["concurrency"] = args.concurrency
    if args.timeout is not None:
        overrides["timeout_s"] = args.timeout
    if overrides:
        spec = replace(spec, **overrides)
    spec.validate("options")
    return spec


def cmd_run(args) -> int:
    from scoring.runner.run import run_benchmark

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


def cmd_serve_agent(args) -> int:
    from scoring.runner.agents import serve

    return serve(args.agent, args.host, args.port, args.workers)


def main(argv: list[str] | None = None) -> int:
    """`python -m scoring.runner.cli` is the same as `spatialgap`."""
    from scoring.cli import main as spatialgap_main

    return spatialgap_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
