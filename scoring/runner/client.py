"""Chat request building, response parsing, failure classification and retries.

`ChatClient.complete(messages)` never raises for a per-sample problem: every outcome (answer,
rate limit exhausted, 4xx with the server's message, garbage body, ...) comes back as an
`Outcome` that the runner records. Only programming errors propagate.

Classification happens BEFORE any retry:
    429                                  -> wait Retry-After (seconds or HTTP-date) or back off,
                                            and halve the adaptive in-flight limit
    5xx, 408, reset, truncated,
    empty body, connect                  -> jittered exponential backoff, bounded attempts
    timeout                              -> retried once (the backend is still computing the
                                            first copy; more copies only slow it down)
    401, 403, 400/404 naming the model,
    404, a request not sendable          -> fatal for the RUN (`RunHealth.stop`): the same
                                            request fails for every sample
    other 4xx                            -> fatal for the sample (server message recorded)
    too large, not JSON, no content      -> fatal for the sample (recorded)

Retries also draw on one budget per run (`RunHealth`), and a circuit breaker stops the run when
the first samples all get server errors (a proxy in front of a dead backend).
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import email.utils
import json
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

try:  # SIMD base64 (~18x faster on a map); QGIS's own Python may lack it: the standard library then
    from pybase64 import b64encode
except ImportError:  # pragma: no cover - exercised only without the wheel
    from base64 import b64encode  # type: ignore[assignment]

from scoring.runner.config import KeyProvider, ModelSpec, Redactor
from scoring.runner.endpoints import Reply, ReplyError, endpoint_kinds
from scoring.runner.health import DOWN_KINDS, RunHealth, RunStop, fatal_for_run, out_of_quota
from scoring.runner.limiter import AdaptiveLimiter, PauseTooLongError
from scoring.runner.transport import DEFAULT_MAX_BYTES, DataURL, Response, TransportError, as_async
from scoring.support.text import url_secrets, without_lone_surrogates

RETRYABLE_TRANSPORT = ("timeout", "reset", "truncated", "connect")
DATA_URL_PREFIX = "data:image/png;base64,"
TIMEOUT_RETRIES = 1
MESSAGE_CHARS = 1000  # a failure's recorded message, cut after redaction


# ---- request building ------------------------------------------------------------------------
def png_data_url(png: bytes) -> DataURL:
    return DataURL(DATA_URL_PREFIX + b64encode(png).decode("ascii"))


def build_request(
    spec: ModelSpec,
    messages: list[dict],
    key: str | None,
    *,
    seed_offset: int = 0,
    schema: Mapping[str, Any] | None = None,
) -> tuple[str, dict, dict]:
    """(url, headers, body) for `messages` in OpenAI chat format (image parts as PNG data URLs),
    in the body form of the spec's endpoint kind. `seed_offset` moves the seed of the k-th
    repeated sample (the first keeps the spec's); the spec's `extra_body` is merged in last and
    its `headers` sent beside the key. `schema`: a structured answer's, asked the kind's way."""
    headers = request_headers(spec, key)
    seed = None if spec.seed is None else spec.seed + seed_offset
    kind = endpoint_kinds()[spec.kind]
    body = kind.build_body(spec, messages, seed)
    if schema is not None and kind.ask_structured is not None:
        kind.ask_structured(body, schema)
    return spec.url, headers, merged(body, spec.extra_body)


def request_headers(spec: ModelSpec, key: str | None) -> dict[str, str]:
    """The spec's extra headers and the key: as the spec's `api_key_header`, or as a bearer token."""
    headers = dict(spec.headers)
    if key:
        if spec.api_key_header:
            headers[spec.api_key_header] = key
        else:
            headers["Authorization"] = f"Bearer {key}"
    return headers


def merged(body: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`body` with `extra` merged in: tables merge key by key (an Ollama `options` keeps its
    seed when `extra_body` adds `num_ctx`), anything else replaces.

    >>> merged({"options": {"seed": 0}, "model": "m"}, {"options": {"num_ctx": 8192}, "think": False})
    {'options': {'seed': 0, 'num_ctx': 8192}, 'model': 'm', 'think': False}
    """
    if not extra:
        return body
    out = dict(body)
    for name, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(name), dict):
            out[name] = merged(out[name], value)
        else:
            out[name] = value
    return out


# ---- response parsing ------------------------------------------------------------------------
@dataclass(frozen=True)
class _Retry:
    """What one sample's retry decision needs of its call (see `complete`)."""

    sample: str
    max_connect_retries: int | None
    budgets: _Budgets
    waited: float
    on_retry: Callable[[str], None] | None
    on_wait: Callable[[WaitNotice], None] | None


@dataclass
class Outcome:
    ok: bool
    text: str | None = None
    reasoning: str | None = None
    usage: dict[str, int] | None = None
    endpoint_model: str | None = None
    finish_reason: str | None = None
    error: dict[str, Any] | None = None  # {"kind", "message", "status"?}
    warnings: list[str] = field(default_factory=list)
    http_attempts: int = 0
    retries: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    status: int | None = None

    def clean_text(self) -> None:
        """Unpaired surrogates (valid JSON, not encodable text) in what the endpoint sent are
        replaced by U+FFFD, with a warning: every writer and reader downstream gets real text."""
        changed = False
        for name in ("text", "reasoning", "endpoint_model", "finish_reason"):
            value = getattr(self, name)
            if isinstance(value, str):
                clean = without_lone_surrogates(value)
                changed |= clean is not value
                setattr(self, name, clean)
        if self.error and isinstance(self.error.get("message"), str):
            clean = without_lone_surrogates(self.error["message"])
            changed |= clean is not self.error["message"]
            self.error["message"] = clean
        if changed:
            self.warnings.append("unpaired UTF-16 surrogate(s) in the reply replaced by U+FFFD")

    def to_record(self) -> dict[str, Any]:
        d = {
            "status": "ok" if self.ok else "error",
            "text": self.text,
            "reasoning": self.reasoning,
            "usage": self.usage,
            "endpoint_model": self.endpoint_model,
            "finish_reason": self.finish_reason,
            "error": self.error,
            "warnings": self.warnings,
            "http_status": self.status,
            "http_attempts": self.http_attempts,
            "retries": self.retries,
            "latency_s": round(self.latency_s, 4),
        }
        return d


# A 2xx reply without a usable answer (the endpoint kinds raise it while reading one).
ResponseParseError = ReplyError


def decode_body(body: bytes, warnings: list[str], redact: Callable[[str], str] = str) -> Any:
    """bytes -> JSON value; raises ResponseParseError. Records lossy decoding in `warnings`.
    `redact` cleans the excerpt a failure quotes before it is cut (a key echoed near the cut)."""
    if not body.strip():
        raise ResponseParseError("empty_body", "empty response body", retryable=True)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = body.decode("utf-8", errors="replace")
        warnings.append("invalid UTF-8 in response body (decoded with replacement characters)")
    if text.startswith("\ufeff"):
        text = text[1:]

    def constant(name: str) -> None:
        msg = f"non-standard JSON constant {name} replaced by null"
        if msg not in warnings:
            warnings.append(msg)
        return None

    try:
        return json.loads(text, parse_constant=constant)
    except (ValueError, RecursionError) as exc:
        # ValueError beyond JSONDecodeError: an integer of more than 4300 digits (Python's
        # int-from-string limit) is valid JSON no reader here will take.
        why = "JSONDecodeError" if isinstance(exc, json.JSONDecodeError) else exc.__class__.__name__
        if isinstance(exc, ValueError) and not isinstance(exc, json.JSONDecodeError):
            why = "a number too long to read"
        excerpt = cut(redact(text[:_EXCERPT_WINDOW]), 200)
        raise ResponseParseError("bad_json", f"response is not JSON ({why}): {excerpt!r}") from None


# Server text is redacted within this window before it is cut to a message's length: a key form
# is far shorter, and a whole 8 MiB body need not be scanned for one excerpt.
_EXCERPT_WINDOW = 1 << 16


def cut(text: str, limit: int) -> str:
    """``text`` on one line (runs of whitespace as one space), at most ``limit`` characters.
    Callers redact before cutting: a cut may split a key, leaving a prefix no match finds."""
    return " ".join(text[:_EXCERPT_WINDOW].split())[:limit]


def parse_success(kind: str, data: Any, out: Outcome) -> None:
    """Fill `out` from a 2xx JSON payload, read by the endpoint kind; raises ResponseParseError."""
    if not isinstance(data, dict):
        raise ResponseParseError("bad_response", f"response JSON is a {type(data).__name__}, not an object")
    if "error" in data and data.get("error") and "choices" not in data and "message" not in data:
        raise ResponseParseError("api_error", f"endpoint returned an error: {_error_message(data)}")
    model = data.get("model")
    out.endpoint_model = model if isinstance(model, str) else None
    reply = Reply()
    try:
        endpoint_kinds()[kind].read_reply(data, reply)
    finally:  # what was read before a failure (finish reason, usage, reasoning) is recorded too
        out.text, out.reasoning = reply.text, reply.reasoning
        out.usage, out.finish_reason = reply.usage, reply.finish_reason


def _error_message(data: Any) -> str:
    """The message of an error body, uncut (callers redact, then cut)."""
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data.get("message")))
        if isinstance(err, dict):
            err = err.get("message") or err.get("detail") or _dumps(err)
        if err is not None:
            return str(err)
        return _dumps(data)
    return str(data)


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value)
    except (ValueError, RecursionError):  # a huge int's str() fails as its parse would
        return "(an unreadable error body)"


def server_message(body: bytes, redact: Callable[[str], str] = str) -> str:
    """The server's error message from an error response body (best effort, one line, at most
    500 characters, redacted by `redact` before it is cut)."""
    try:
        msg = _error_message(decode_body(body, [], redact))
    except ResponseParseError:
        msg = body[:_EXCERPT_WINDOW].decode("utf-8", errors="replace")
    return cut(redact(msg[:_EXCERPT_WINDOW]), 500) or "(empty body)"


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date)."""
    if not value:
        return None
    value = value.strip()
    try:
        secs = float(value)
        return max(0.0, secs) if math.isfinite(secs) else None
    except ValueError:
        pass
    try:
        dt = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=_dt.UTC)
    return max(0.0, dt.timestamp() - (time.time() if now is None else now))


# ---- the client ------------------------------------------------------------------------------
class ChatClient:
    def __init__(
        self,
        spec: ModelSpec,
        transport: Any = None,
        key_provider: KeyProvider | None = None,
        limiter: AdaptiveLimiter | None = None,
        redactor: Redactor | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        rng: random.Random | None = None,
        health: RunHealth | None = None,
    ):
        self.spec = spec
        self.health = health or RunHealth(max_retries=spec.max_retries, concurrency=spec.concurrency)
        self.transport = as_async(transport)
        self._owns_transport = transport is None
        self.key_provider = key_provider
        self.limiter = limiter or AdaptiveLimiter(spec.concurrency)
        self.redactor = redactor or Redactor()
        for secret in url_secrets(spec.base_url):  # a key in the URL: never echoed in a record
            self.redactor.add(secret)
        self.max_bytes = max_bytes
        self.rng = rng or random.Random()
        self._key: str | None = None
        self._key_loaded = False

    def key(self) -> str | None:
        if not self._key_loaded:
            self._key = self.key_provider.get_key(self.spec) if self.key_provider else None
            self.redactor.add(self._key)
            self._key_loaded = True
        return self._key

    def backoff(self, attempt: int) -> float:
        base = min(self.spec.backoff_max_s, self.spec.backoff_base_s * (2 ** max(0, attempt - 1)))
        return base * (0.5 + 0.5 * self.rng.random())

    async def aclose(self) -> None:
        if self._owns_transport and hasattr(self.transport, "aclose"):
            await self.transport.aclose()

    async def complete(
        self,
        messages: list[dict],
        *,
        on_retry: Callable[[str], None] | None = None,
        max_connect_retries: int | None = None,
        sample: str | None = None,
        on_wait: Callable[[WaitNotice], None] | None = None,
        seed_offset: int = 0,
        schema: Mapping[str, Any] | None = None,
    ) -> Outcome:
        """Send `messages` until answered or a failure is final (see the module's table).
        `max_connect_retries`: set while the endpoint's reachability is unconfirmed (fail fast);
        `on_retry` / `on_wait`: told before each retry and wait; `seed_offset`, `schema`: see
        build_request."""
        url, headers, body = build_request(
            self.spec, messages, self.key(), seed_offset=seed_offset, schema=schema
        )
        out = Outcome(ok=False)
        health, sample = self.health, sample or str(id(messages))
        if health.stop is not None:
            out.error = {"kind": "not_sent", "message": f"run stopped: {health.stop.kind}"}
            return out
        t0 = time.perf_counter()
        budgets = _Budgets(self.spec.max_retries, max_connect_retries)
        waited = 0.0  # seconds this sample has waited, its own retry pauses and the run's shared ones
        while True:
            try:
                failure, wait, paused = await self._limited(url, headers, body, out, waited)
            except PauseTooLongError as exc:
                self._give_up_paused(exc.pause_s, sample, waited, out, on_wait)
                break
            waited += paused
            if failure is None:
                out.ok, out.error = True, None
                self.limiter.on_success()
                health.success()
                break
            retry = _Retry(sample, max_connect_retries, budgets, waited, on_retry, on_wait)
            delay = self._next_delay(failure, wait, retry, out)
            if delay is None:
                break
            waited += delay
            await asyncio.sleep(delay)
        out.latency_s = time.perf_counter() - t0
        out.clean_text()
        return out

    def _next_delay(
        self, failure: tuple[str, str, bool], wait: float | None, retry: _Retry, out: Outcome
    ) -> float | None:
        """The pause before the next attempt after `failure`, or None when the sample stops here
        (not retryable, a budget spent, the run stopping, or the wait past max_wait_s)."""
        kind, message, retryable = failure
        self._record_failure(kind, message, retry.sample, retry.max_connect_retries, out)
        used = out.retries.setdefault(kind, 0)
        if not retryable or retry.budgets.spent(kind, used, sum(out.retries.values())):
            return None
        if self.health.stop is not None or (kind != "rate_limited" and not self.health.take_retry()):
            return None
        delay = self._delay(kind, used, wait, retry.max_connect_retries)
        notice = WaitNotice(retry.sample, kind, delay, wait, retry.waited, self.spec.max_wait_s)
        if retry.waited + max(delay, wait or 0.0) > self.spec.max_wait_s:
            _give_up(notice, out, retry.on_wait)  # now, not after 40 minutes of waits: a re-run retries
            return None
        out.retries[kind] = used + 1
        if kind == "rate_limited":
            self.limiter.on_rate_limited(delay)
        if retry.on_retry:
            retry.on_retry(kind)
        if retry.on_wait:
            retry.on_wait(notice)
        return delay

    async def _limited(
        self, url: str, headers: dict, body: dict, out: Outcome, waited: float
    ) -> tuple[tuple[str, str, bool] | None, float | None, float]:
        """`_exchange` within the limiter: its result and the seconds the limiter made it wait
        (PauseTooLongError when that would pass what is left of the sample's max_wait_s)."""
        paused = await self.limiter.acquire(self.spec.max_wait_s - waited)
        out.http_attempts += 1
        out.warnings = []
        try:
            failure, wait = await self._exchange(url, headers, body, out)
        finally:
            await self.limiter.release()
        return failure, wait, paused

    async def _exchange(
        self, url: str, headers: dict, body: dict, out: Outcome
    ) -> tuple[tuple[str, str, bool] | None, float | None]:
        """One POST: (the failure as (kind, message, retryable), or None when `out` holds the
        answer; the server's Retry-After in seconds, uncapped, if it sent one)."""
        try:
            resp: Response = await self.transport.post_json(
                url, headers, body, self.spec.timeout_s, self.max_bytes
            )
        except TransportError as exc:
            if exc.kind == "too_large":
                out.status = exc.status
                return ("too_large", f"response too large (> {self.max_bytes} bytes)", False), None
            return (exc.kind, exc.message, exc.kind in RETRYABLE_TRANSPORT), None
        out.status = resp.status
        if resp.status >= 400:
            message = f"HTTP {resp.status}: {server_message(resp.body, self.redactor.text)}"
        if resp.status in (402, 429):
            wait = parse_retry_after(resp.headers.get("retry-after"))
            if resp.status == 402 or (wait is None and out_of_quota(message)):
                return ("quota", message, False), None  # no wait ends a billing refusal
            return ("rate_limited", message, True), wait
        if resp.status >= 500 or resp.status == 408:
            return ("server_error", message, True), None
        if resp.status >= 400:
            return ("client_error", message, False), None
        if not 200 <= resp.status < 300:
            return ("bad_status", f"unexpected HTTP {resp.status}", False), None
        try:
            parse_success(self.spec.kind, decode_body(resp.body, out.warnings, self.redactor.text), out)
        except ResponseParseError as pf:
            return (pf.kind, pf.message, pf.retryable), None
        return None, None

    def _record_failure(
        self, kind: str, message: str, sample: str, max_connect_retries: int | None, out: Outcome
    ) -> str:
        """The failure in `out.error` (redacted; the redacted message is returned), and what it
        tells the run's health: a stop for the whole run, a refusal, a server down."""
        health = self.health
        message = cut(self.redactor.text(message), MESSAGE_CHARS)
        out.error = {"kind": kind, "message": message}
        if out.status is not None:
            out.error["status"] = out.status
        stop = None
        if kind == "invalid_request":
            stop = RunStop(kind, message, "check the configuration (API key, headers)")
        elif kind == "quota":
            stop = RunStop(
                kind,
                message,
                "the endpoint says the account has no quota or credit left (billing, not a rate "
                "limit): check its plan and billing, then re-run the same command to resume",
            )
        elif kind == "client_error":
            stop = fatal_for_run(out.status, message, self.spec)
            health.refused(sample, message)
        if stop is not None and health.stop is None:
            health.stop = stop
        if kind in DOWN_KINDS and not (kind == "connect" and max_connect_retries is not None):
            health.down(sample, message)
        return message

    def _give_up_paused(
        self,
        pause: float | None,
        sample: str,
        waited: float,
        out: Outcome,
        on_wait: Callable[[WaitNotice], None] | None,
    ) -> None:
        """Record the sample as rate limited, not sent again: the run's shared pause (or the wait
        for a slot the limiter took back after a 429) would pass its wait budget."""
        notice = WaitNotice(
            sample, "rate_limited", pause or 0.0, None, waited, self.spec.max_wait_s, shared=True
        )
        _give_up(notice, out, on_wait)

    def _delay(self, kind: str, used: int, wait: float | None, max_connect_retries: int | None) -> float:
        """Seconds to wait before retry number `used + 1` of a `kind` failure."""
        if kind == "connect" and max_connect_retries is not None:
            return 0.1 * (2**used)  # reachability not yet established: fail fast
        if kind == "rate_limited":
            return min(self.backoff(used + 1) if wait is None else wait, self.spec.max_retry_after_s)
        return self.backoff(used + 1)


def _give_up(notice: WaitNotice, out: Outcome, on_wait: Callable[[WaitNotice], None] | None) -> None:
    """The sample recorded as failed with why it is not retried, and the display told."""
    prior = (out.error or {}).get("message")
    why = notice.not_retried()
    out.error = {**(out.error or {}), "kind": notice.kind, "message": f"{prior} ({why})" if prior else why}
    if on_wait:
        on_wait(replace(notice, gave_up=True))


@dataclass(frozen=True)
class _Budgets:
    """How many retries one sample may have, by failure kind: rate limits at least 8, connects at
    most 3 (or the caller's bound while reachability is unconfirmed), a timeout once."""

    max_retries: int
    max_connect_retries: int | None

    def spent(self, kind: str, used: int, total: int) -> bool:
        """Whether a `kind` failure after `used` retries of it (`total` of all kinds) ends here."""
        rate = max(self.max_retries, 8)
        if kind == "rate_limited":
            budget = rate
        elif kind == "connect":
            budget = (
                min(self.max_retries, 3) if self.max_connect_retries is None else self.max_connect_retries
            )
        elif kind == "timeout":
            budget = min(self.max_retries, TIMEOUT_RETRIES)
        else:
            budget = self.max_retries
        return used >= budget or total >= rate + self.max_retries


@dataclass(frozen=True)
class WaitNotice:
    """A sample about to wait before a retry (or giving up because the wait would pass
    ``budget_s``): what a display shows, since a silent 5-minute pause looks like a hang."""

    sample: str
    kind: str
    delay_s: float
    asked_s: float | None  # the server's Retry-After, uncapped
    waited_s: float  # waited by this sample so far
    budget_s: float
    gave_up: bool = False
    shared: bool = False  # the run's pause after a 429 (or a slot it took back), not this sample's

    def not_retried(self) -> str:
        """Why the sample is recorded as failed instead of waiting."""
        if self.shared:
            asked = "the run's rate-limit pause"
        elif self.asked_s is not None:
            asked = f"Retry-After {self.asked_s:g} s"
        else:
            asked = f"a {self.delay_s:.3g} s backoff"
        return (
            f"not retried: {asked} would pass the sample's wait budget of {self.budget_s:g} s, "
            f"max_wait_s; {self.waited_s:.3g} s already waited"
        )

    def line(self) -> str:
        why = f"Retry-After {self.asked_s:g} s" if self.asked_s is not None else self.kind
        if self.shared:
            why = "the run's rate-limit pause"
        if self.gave_up:
            return (
                f"{self.sample}: not retried ({why}): the sample's wait budget is {self.budget_s:g} s "
                "(max_wait_s, --max-wait); recorded as failed, a re-run retries it"
            )
        return (
            f"{self.sample}: {self.kind}, waiting {self.delay_s:.3g} s ({why}); "
            f"at most {self.budget_s:g} s of waiting per sample (max_wait_s, --max-wait)"
        )
