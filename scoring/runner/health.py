"""The health of one run, shared by all its samples: why it must stop (credentials refused,
unknown model, a dead backend), a circuit breaker and a retry budget for the whole run."""

from __future__ import annotations

import re
from dataclasses import dataclass

from scoring.runner.config import ModelSpec, public_url

# Failures that say the backend is down (not slow): they feed the circuit breaker.
DOWN_KINDS = ("server_error", "reset", "truncated", "empty_body", "connect")
BREAKER_SAMPLES = 8  # at most this many distinct samples failing in a row open the breaker
_MODEL_WORDS = re.compile(
    r"model.{0,80}(not found|not exist|does not exist|invalid|unknown|no such|not available|"
    r"not supported|unsupported)|(invalid|unknown|no such).{0,20}model",
    re.IGNORECASE | re.DOTALL,
)

_PARAM_WORDS = re.compile(
    r"\b(temperature|max_tokens|seed|top_p)\b.{0,120}(unsupported|not support|invalid|not allowed)"
    r"|(?:unsupported|invalid|unrecognized|unknown)\s+(?:parameter|value|argument)\W{0,4}(?:\w+\W+){0,3}?"
    r"\W?(temperature|max_tokens|seed|top_p)\b",
    re.IGNORECASE | re.DOTALL,
)

# A 429 (or 402) that is billing, not pacing: no wait ends it. Only with no Retry-After and no
# "retry in": some providers word a per-minute limit "You exceeded your current quota" too.
_QUOTA_WORDS = re.compile(
    r"insufficient[_ ]quota|exceeded your current quota|billing[_ ](?:hard[_ ]limit|not[_ ]active)"
    r"|credit balance|insufficient[_ ](?:balance|credits?|funds)|out of credits|payment required",
    re.IGNORECASE,
)
_RETRY_WORDS = re.compile(r"(?:retry|try again) (?:in|after)\b", re.IGNORECASE)


def out_of_quota(message: str) -> bool:
    """Whether a 429's message says the account is out of quota or credit (billing).

    >>> out_of_quota('HTTP 429: You exceeded your current quota, please check your plan and billing details.')
    True
    >>> out_of_quota('HTTP 429: Quota exceeded for requests per minute. Please retry in 37.2s.')
    False
    """
    return bool(_QUOTA_WORDS.search(message)) and not _RETRY_WORDS.search(message)


@dataclass
class RunStop:
    """Why a run stops before its end: the server's words and what to do about it."""

    kind: str  # auth | model | not_found | invalid_request | endpoint_down
    message: str
    advice: str


def fatal_for_run(status: int | None, message: str, spec: ModelSpec) -> RunStop | None:
    """A response that every other sample of the run would get too, or None."""
    key = f"the key in ${spec.api_key_env}" if spec.api_key_env else "an API key (api_key_env)"
    if status in (401, 403):
        return RunStop("auth", message, f"the endpoint refused the credentials: check {key}")
    if status in (400, 404) and _MODEL_WORDS.search(message):
        return RunStop(
            "model",
            message,
            f"check the model name {spec.model!r} (the endpoint's GET /v1/models lists what it serves)",
        )
    param = _PARAM_WORDS.search(message) if status == 400 else None
    if param:
        name = (param.group(1) or param.group(3)).lower()
        if name == "max_tokens":
            return RunStop(
                "parameter",
                message,
                "the model wants max_completion_tokens: set max_completion_tokens = N in the model's "
                "config (or --max-completion-tokens N) instead of max_tokens",
            )
        return RunStop(
            "parameter",
            message,
            f'the model rejects a generation parameter: leave it out (omit = ["{name}"] in the '
            f"model's config, or --omit {name}) or change its value",
        )
    if status == 404:
        return RunStop("not_found", message, f"check base_url (requests go to {public_url(spec.url)})")
    return None


class RunHealth:
    """State shared by every sample of one run: the stop reason once the run must end, a circuit
    breaker over down-backend failures and a retry budget for the whole run (a per-sample bound
    alone lets a run of N samples send N x max_retries extra requests to a struggling server)."""

    def __init__(self, samples: int = 1, max_retries: int = 5, concurrency: int = BREAKER_SAMPLES):
        self.stop: RunStop | None = None
        self.retry_budget = max_retries * max(4, -(-samples // 4))
        self.retries_used = 0
        self.successes = 0
        # The breaker needs a full wave of distinct samples failing (at most BREAKER_SAMPLES),
        # each about twice, so one bad sample or one transient blip never opens it.
        self._need = max(2, min(BREAKER_SAMPLES, concurrency))
        self._down_samples: set[str] = set()
        self._down_attempts = 0
        self._refusals: dict[str, set[str]] = {}

    def success(self) -> None:
        self.successes += 1
        self._down_samples.clear()
        self._down_attempts = 0

    def down(self, sample: str, message: str) -> None:
        """A down-backend failure for ``sample``; opens the breaker when a wave of samples in a
        row failed so and nothing has succeeded since."""
        self._down_samples.add(sample)
        self._down_attempts += 1
        if (
            self.stop is None
            and len(self._down_samples) >= self._need
            and self._down_attempts >= 2 * self._need
        ):
            self.stop = RunStop(
                "endpoint_down",
                f"{len(self._down_samples)} samples in a row failed, last: {message}",
                "the endpoint (or the model server behind a proxy) is not answering; "
                "fix it, then re-run the same command to resume",
            )

    def refused(self, sample: str, message: str) -> None:
        """A 4xx for ``sample``; the same refusal for a wave of distinct samples before anything
        succeeded is the endpoint refusing the configuration, not one request (e.g. a proxy
        without its key database, a text-only model sent images)."""
        if self.successes or self.stop is not None:
            return
        samples = self._refusals.setdefault(message, set())
        samples.add(sample)
        if len(samples) >= self._need:
            self.stop = RunStop(
                "refused",
                f"{len(samples)} different samples got the same answer: {message}",
                "the endpoint refuses the configuration, not one request: check the key, the "
                "model name, the parameters sent (omit = [...]) and the modalities the model reads",
            )

    def take_retry(self) -> bool:
        if self.retries_used >= self.retry_budget:
            return False
        self.retries_used += 1
        return True
