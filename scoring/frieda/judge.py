"""The optional judge model for textual FRIEDA answers without an exact match. The only FRIEDA
module that talks to a model: it alone imports the runner's HTTP client."""

from __future__ import annotations

import argparse
import asyncio

from scoring.answers import parse_yes_no
from scoring.errors import InputError
from scoring.runner.client import ChatClient
from scoring.runner.config import EnvKeyProvider, ModelSpec, get_model

JUDGE_PROMPT = (
    "You check answers to a map-reading question. Decide whether the model's answer names the same "
    "thing(s) as the expected answer (spelling variants, abbreviations and extra descriptive words "
    "are fine; a different or additional place is not).\n\nQuestion: {question}\n"
    "Expected answer: {expected}\nModel's answer: {response}\n\n"
    "Reply with one word: yes or no."
)


class EndpointJudge:
    """A ``Judge`` backed by a model endpoint (the runner's client: retries, key from the
    environment, never written anywhere). Its use is reported: ``calls`` and ``public``."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self.calls = 0
        self._loop = asyncio.new_event_loop()
        self._client = ChatClient(spec, key_provider=EnvKeyProvider())

    def public(self) -> dict:
        return {"model": self.spec.public_dict(), "calls": self.calls, "prompt": JUDGE_PROMPT}

    def __call__(self, question: str, expected: list, response: list) -> bool:
        self.calls += 1
        prompt = JUDGE_PROMPT.format(
            question=question or "(not given)",
            expected="; ".join(map(str, expected)),
            response="; ".join(map(str, response)),
        )
        out = self._loop.run_until_complete(self._client.complete([{"role": "user", "content": prompt}]))
        if not out.ok:
            raise RuntimeError(f"judge request failed ({(out.error or {}).get('kind', 'error')})")
        parsed = parse_yes_no(out.text)
        if not parsed.ok:
            raise ValueError(f"judge reply not yes/no ({parsed.reason})")
        return bool(parsed.value)

    def close(self) -> None:
        self._loop.run_until_complete(self._client.aclose())
        self._loop.close()


def judge_from_args(args: argparse.Namespace) -> EndpointJudge | None:
    if not args.judge_model:
        if args.judge_endpoint or args.judge_config:
            raise InputError("--judge-endpoint/--judge-config need --judge-model")
        return None
    if args.judge_config:
        spec = get_model(args.judge_config, args.judge_model)
    elif args.judge_endpoint:
        spec = ModelSpec.from_endpoint(args.judge_endpoint, args.judge_model, args.judge_api_key_env)
    else:
        raise InputError("--judge-model needs --judge-config FILE or --judge-endpoint URL")
    return EndpointJudge(spec)
