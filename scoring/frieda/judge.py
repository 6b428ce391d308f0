"""The optional judge model for textual FRIEDA answers without an exact match. The only FRIEDA
module that talks to a model: it alone imports the runner's HTTP client.

Two prompts: ``compare`` (one call: does the model's answer name the same thing(s) as the
expected answer?) and ``two-step``, FRIEDA's procedure: first the judge extracts the portion of
the response that answers the question (``NONE`` when there is none: wrong without a second
call), then it compares that portion with the expected answer. Calls are counted per call.
"""

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
# FRIEDA's two steps (our wording): extract the answer, then compare it.
EXTRACT_PROMPT = (
    "Below are a question about one or more maps and a model's response to it. Copy the exact part "
    "of the response that states the model's answer to the question, word for word, and nothing "
    "else. If the response gives no answer, reply NONE.\n\nQuestion: {question}\n"
    "Response: {response}\n\nAnswer portion:"
)
JUDGE_PROMPTS = ("compare", "two-step")
_NONE = ("none", "none.", "n/a", "")


class EndpointJudge:
    """A ``Judge`` backed by a model endpoint (the runner's client: retries, key from the
    environment, never written anywhere). Its use is reported: ``calls`` and ``public``."""

    def __init__(self, spec: ModelSpec, prompt: str = "compare") -> None:
        if prompt not in JUDGE_PROMPTS:
            raise InputError(f"judge prompt must be one of {', '.join(JUDGE_PROMPTS)}, got {prompt!r}")
        self.spec = spec
        self.prompt = prompt
        self.calls = 0  # answers sent to the judge
        self.requests = 0  # chat requests (two per answer with two-step, unless nothing is extracted)
        self._loop = asyncio.new_event_loop()
        self._client = ChatClient(spec, key_provider=EnvKeyProvider())

    def public(self) -> dict:
        prompts = [EXTRACT_PROMPT, JUDGE_PROMPT] if self.prompt == "two-step" else [JUDGE_PROMPT]
        return {
            "model": self.spec.public_dict(),
            "calls": self.calls,
            "requests": self.requests,
            "procedure": self.prompt,
            "prompt": JUDGE_PROMPT,
            "prompts": prompts,
        }

    def _ask(self, prompt: str) -> str:
        self.requests += 1
        out = self._loop.run_until_complete(self._client.complete([{"role": "user", "content": prompt}]))
        if not out.ok:
            raise RuntimeError(f"judge request failed ({(out.error or {}).get('kind', 'error')})")
        return out.text or ""

    def __call__(self, question: str, expected: list, response: list) -> bool:
        self.calls += 1
        answer = "; ".join(map(str, response))
        if self.prompt == "two-step":
            extracted = self._ask(
                EXTRACT_PROMPT.format(question=question or "(not given)", response=answer)
            ).strip()
            if extracted.strip(" \"'`*").lower() in _NONE:
                return False
            answer = extracted
        text = self._ask(
            JUDGE_PROMPT.format(
                question=question or "(not given)",
                expected="; ".join(map(str, expected)),
                response=answer,
            )
        )
        parsed = parse_yes_no(text)
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
    return EndpointJudge(spec, getattr(args, "judge_prompt", "compare"))
