"""Model configuration: which endpoint, which model, which generation parameters.

A TOML file names models under ``[models.NAME]``::

    [models.qwen]
    kind = "openai"                    # or "ollama"
    base_url = "http://127.0.0.1:8000/v1"
    model = "Qwen2.5-VL-7B-Instruct"
    api_key_env = "QWEN_API_KEY"       # the NAME of an environment variable, never the key
    temperature = 0.0
    max_tokens = 1024                  # or max_completion_tokens (reasoning models)
    seed = 0
    omit = ["seed"]                    # generation parameters the endpoint rejects: not sent
    modalities = ["geojson", "image", "together"]   # what the model can read (evaluate)
    concurrency = 8
    extra_body = { reasoning_effort = "low" }       # merged into every request body
    headers = { "X-Title" = "spatialgap" }          # extra HTTP headers (values never recorded)

API keys never live in a spec: a `KeyProvider` hands them to the client at request time
(`EnvKeyProvider` reads the environment; the QGIS plugin supplies its auth-database one).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import SplitResult, parse_qsl, urlsplit, urlunsplit

from scoring.answers.structured import ANSWER_FORMAT_CHOICES
from scoring.errors import InputError
from scoring.runner.endpoints import endpoint_kinds
from scoring.runner.secrets import REDACTED, Redactor, credential_in, secret_forms  # noqa: F401 - re-exported
from scoring.vocab import MODALITIES

IMAGE_DETAILS = ("auto", "low", "high")
# Generation parameters a config may leave out of the request (`omit = [...]`, `--omit`):
# reasoning models reject temperature != 1, some servers reject seed or max_tokens.
OMITTABLE = ("temperature", "max_tokens", "seed", "top_p")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Printable ASCII without spaces: anything else cannot travel in an HTTP header.
_KEY_CHARS = re.compile(r"^[\x21-\x7e]+$")
# RFC 9110 header names; values are visible ASCII and spaces (no line break can smuggle a header).
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HEADER_VALUE = re.compile(r"^[\x20-\x7e]*$")
_TRANSPORT_HEADERS = {"authorization", "content-type", "content-length", "host", "connection"}
_SECRET_HEADER = re.compile(r"key|token|secret|passw|auth|cookie|credential|session", re.IGNORECASE)


class ConfigError(InputError):
    """A model config or endpoint option is invalid (one-line message naming the field)."""


@dataclass(frozen=True)
class ModelSpec:
    """Everything needed to talk to one model endpoint, minus the secret key."""

    name: str
    kind: str
    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float | None = 0.0
    max_tokens: int | None = 1024
    seed: int | None = 0
    top_p: float | None = None
    max_completion_tokens: int | None = None
    # What the model can read; `evaluate` runs only these modalities (never part of a request).
    modalities: tuple[str, ...] = MODALITIES
    concurrency: int = 8
    timeout_s: float = 120.0
    max_retries: int = 5
    image_detail: str = "high"
    # How QA answers are asked for: "text" (the paper's free text) or "json" (a structured
    # answer, sent as the endpoint kind's structured-output request; scoring.answers.structured).
    answer_format: str = "text"
    # Retry pacing (not part of the request, so not part of the cache key).
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    max_retry_after_s: float = 300.0
    max_wait_s: float = 300.0  # all the waiting (Retry-After, backoff) one sample may do
    # Prices per million tokens in / out, for the report's cost (never part of a request).
    price_in: float | None = None
    price_out: float | None = None
    # Repeated sampling: each item is asked `samples` times (index 1.. enters the request key;
    # 1 keeps every key as before). Not a generation parameter: never sent.
    samples: int = 1
    # Request parameters this tool does not name (reasoning effort, chat-template arguments,
    # Ollama's num_ctx): merged into every body, so part of the request key when set.
    extra_body: Mapping[str, Any] = field(default_factory=dict, hash=False)
    # Extra HTTP headers; their values are never recorded (a manifest lists the names only).
    headers: Mapping[str, str] = field(default_factory=dict, hash=False)
    # The header that carries the api_key_env key as it is (e.g. Azure's "api-key"); unset:
    # "Authorization: Bearer KEY".
    api_key_header: str | None = None

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_mapping(cls, name: str, data: dict[str, Any], where: str = "") -> ModelSpec:
        prefix = f"{where}models.{name}"
        known = {f.name for f in fields(cls)} - {"name"}
        unknown = sorted(set(data) - known - {"omit"})
        if unknown:
            raise ConfigError(
                f"{prefix}.{unknown[0]}: unknown field (known: {', '.join(sorted([*known, 'omit']))})"
            )
        for required in ("kind", "base_url", "model"):
            if required not in data:
                raise ConfigError(f"{prefix}.{required}: missing required field")
        data = dict(data)
        omit = data.pop("omit", [])
        if not isinstance(omit, list) or not all(isinstance(o, str) for o in omit):
            raise ConfigError(f"{prefix}.omit: expected a list of parameter names")
        if "modalities" in data:
            data["modalities"] = _modalities(data["modalities"], f"{prefix}.modalities")
        spec = cls(name=name, **_omitting(data, omit, f"{prefix}.omit"))
        spec.validate(prefix)
        return spec

    @classmethod
    def from_endpoint(
        cls,
        url: str,
        model: str,
        api_key_env: str | None = None,
        *,
        kind: str = "openai",
        name: str | None = None,
        **params: Any,
    ) -> ModelSpec:
        """A spec for ``--endpoint URL --model NAME [--api-key-env VAR]`` (no config file);
        ``omit`` names generation parameters not to send."""
        omit = params.pop("omit", None) or ()
        params = {k: v for k, v in params.items() if v is not None}
        if "modalities" in params:
            params["modalities"] = _modalities(params["modalities"], "endpoint.modalities")
        params = _omitting(params, list(omit), "--omit")
        spec = cls(
            name=name or model, kind=kind, base_url=url, model=model, api_key_env=api_key_env, **params
        )
        spec.validate("endpoint")
        return spec

    def validate(self, prefix: str = "model") -> None:
        """ConfigError naming `prefix.field` for the first field out of its domain."""

        def bad(field: str, why: str) -> ConfigError:
            return ConfigError(f"{prefix}.{field}: {why}")

        self._validate_endpoint(bad)
        for name, (lo, hi, integer, optional) in _NUMBERS.items():
            _check_number(name, getattr(self, name), lo, hi, integer, optional, bad)
        if self.max_tokens is not None and self.max_completion_tokens is not None:
            raise bad("max_completion_tokens", "give max_tokens or max_completion_tokens, not both")
        if not self.modalities or any(m not in MODALITIES for m in self.modalities):
            raise bad("modalities", f"must be a non-empty list of {', '.join(MODALITIES)}")
        if self.image_detail not in IMAGE_DETAILS:
            raise bad("image_detail", f"must be one of {', '.join(IMAGE_DETAILS)}, got {self.image_detail!r}")
        if self.answer_format not in ANSWER_FORMAT_CHOICES:
            raise bad(
                "answer_format",
                f"must be one of {', '.join(ANSWER_FORMAT_CHOICES)}, got {str(self.answer_format)[:40]!r}",
            )
        _check_extra_body(self.extra_body, bad)
        _check_headers(self.headers, self.api_key_header, bad)

    def _validate_endpoint(self, bad: Callable[[str, str], ConfigError]) -> None:
        """kind, model, base_url and api_key_env: where and to what requests go."""
        if not isinstance(self.kind, str):
            raise bad("kind", f"must be one of {', '.join(endpoint_kinds())}, got {self.kind!r}")
        if self.kind not in endpoint_kinds():
            raise bad("kind", str(endpoint_kinds().unknown(self.kind)))
        if not isinstance(self.model, str) or not self.model.strip():
            raise bad("model", "must be a non-empty string")
        if not isinstance(self.base_url, str):
            raise bad("base_url", f"expected a string, got {self.base_url!r}")
        parts = _split_base_url(self.base_url, bad)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise bad("base_url", f"must be an http(s) URL, got {public_url(self.base_url)!r}")
        if parts.username or parts.password:
            raise bad("base_url", "must not contain credentials; use api_key_env")
        _check_query(parts, bad)
        suffix = endpoint_kinds()[self.kind].chat_path
        if parts.path.rstrip("/").endswith(suffix):
            raise bad(
                "base_url",
                f"give the base URL without {suffix} (it is appended), "
                f"e.g. {public_url(self.base_url).rstrip('/')[: -len(suffix)] or 'http://HOST:PORT/v1'}",
            )
        if self.api_key_env is not None and (
            not isinstance(self.api_key_env, str) or not _ENV_NAME.match(self.api_key_env)
        ):
            # Do not echo the value: a user may have pasted the key itself here.
            raise bad(
                "api_key_env",
                "must be the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself",
            )

    # ---- views ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The URL requests are POSTed to."""
        # The endpoint's path goes on the base URL's path, before any query (`?api-version=`).
        parts = urlsplit(self.base_url)
        suffix = endpoint_kinds()[self.kind].chat_path
        return urlunsplit(parts._replace(path=parts.path.rstrip("/") + suffix, fragment=""))

    def generation_params(self) -> dict[str, Any]:
        params = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "top_p": self.top_p,
            "image_detail": self.image_detail,
        }
        # Only when set, so request keys of runs journaled before this field existed still match.
        if self.max_completion_tokens is not None:
            params["max_completion_tokens"] = self.max_completion_tokens
        if self.answer_format != "text":
            params["answer_format"] = self.answer_format
        if self.extra_body:
            params["extra_body"] = json.loads(json.dumps(self.extra_body, sort_keys=True))
        return params

    def public_dict(self) -> dict[str, Any]:
        """The spec as recorded in manifests (it never holds a key; URL credentials are stripped)."""
        d = asdict(self)
        d["base_url"] = public_url(self.base_url)
        d["modalities"] = list(self.modalities)
        # Only when set, as recorded before these fields existed; header values may be secrets.
        for name in ("samples", "extra_body", "headers", "api_key_header"):
            if d[name] in (1, {}, None):
                del d[name]
        if d["answer_format"] == "text":
            del d["answer_format"]
        if "headers" in d:
            d["headers"] = sorted(d["headers"])
        return d


# Query parameter names that carry a credential (`?api_key=`, `?access_token=`, `?sig=`, ...):
# refused like user:password@, since a URL is echoed in error bodies, logs and manifests.
_SECRET_PARAM = re.compile(r"key|token|secret|passw|pwd|auth|sig|credential|session|bearer", re.IGNORECASE)


def _split_base_url(url: str, bad: Callable[[str, str], ConfigError]) -> SplitResult:
    """`url` split, or a ConfigError that says why it is no URL (never echoing it: it may hold a key)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number or out of range
    except ValueError as exc:
        # our words, not Python's: its message may quote a piece of the URL ("as 'sk-...'")
        if "IPv6" in str(exc):
            why = "Invalid IPv6 URL (an IPv6 host goes in brackets: http://[::1]:8000/v1)"
        elif "range" in str(exc):
            why = "Port out of range 0-65535"
        else:
            why = "the port is not a number"
        raise bad("base_url", f"not a valid URL: {why}") from None
    return parts


def _check_query(parts: SplitResult, bad: Callable[[str, str], ConfigError]) -> None:
    """A query may carry options (`?api-version=...`), never a credential; a fragment is never sent."""
    if parts.fragment:
        raise bad("base_url", "must not contain a #fragment")
    for name, _value in parse_qsl(parts.query, keep_blank_values=True):
        if _SECRET_PARAM.search(name):
            raise bad(
                "base_url",
                f"must not contain credentials (query parameter {name!r}); use api_key_env",
            )


# The numeric fields' domains: (lowest, highest, integer, may be None), in the order checked.
_NUMBERS: dict[str, tuple[float | None, float | None, bool, bool]] = {
    "temperature": (0, 10, False, True),
    "top_p": (0, 1, False, True),
    "max_tokens": (1, None, True, True),
    "seed": (None, None, True, True),
    "max_completion_tokens": (1, None, True, True),
    "concurrency": (1, 4096, True, False),
    "timeout_s": (0.001, None, False, False),
    "max_retries": (0, 100, True, False),
    "backoff_base_s": (0, None, False, False),
    "backoff_max_s": (0, None, False, False),
    "max_retry_after_s": (0, None, False, False),
    "max_wait_s": (0, None, False, False),
    "price_in": (0, None, False, True),
    "price_out": (0, None, False, True),
    "samples": (1, 1000, True, False),
}


def _check_number(
    field: str,
    value: Any,
    lo: float | None,
    hi: float | None,
    integer: bool,
    optional: bool,
    bad: Callable[[str, str], ConfigError],
) -> None:
    if value is None:
        if optional:
            return
        raise bad(field, "must be set")
    ok_types = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, ok_types):
        raise bad(field, f"expected {'an integer' if integer else 'a number'}, got {value!r}")
    if value != value:  # NaN
        raise bad(field, "must not be NaN")
    if lo is not None and value < lo:
        raise bad(field, f"must be >= {lo}, got {value!r}")
    if hi is not None and value > hi:
        raise bad(field, f"must be <= {hi}, got {value!r}")


def _check_extra_body(extra: Any, bad: Callable[[str, str], ConfigError]) -> None:
    if not isinstance(extra, Mapping):
        raise bad("extra_body", f"expected a table of request parameters, got {type(extra).__name__}")
    clash = sorted({"model", "messages"} & set(extra))
    if clash:
        raise bad("extra_body", f"{clash[0]!r} is set by the tool, not by extra_body")
    try:
        json.dumps(extra, allow_nan=False)
    except (TypeError, ValueError) as exc:  # TOML dates, NaN: no JSON for them
        raise bad("extra_body", f"must be JSON values ({exc})") from None
    where = credential_in(extra)
    if where:
        # never the value: it is a key, and this line goes to a terminal and logs
        raise bad(
            f"extra_body.{where}",
            "looks like a credential; a body is recorded in manifests: give the key in "
            "api_key_env (with api_key_header for a header other than Authorization)",
        )


def _check_headers(headers: Any, key_header: Any, bad: Callable[[str, str], ConfigError]) -> None:
    if not isinstance(headers, Mapping):
        raise bad("headers", f"expected a table of header names and values, got {type(headers).__name__}")
    for name, value in headers.items():
        if not isinstance(name, str) or not _HEADER_NAME.match(name):
            raise bad("headers", f"{name!r} is not an HTTP header name")
        if name.lower() in _TRANSPORT_HEADERS:
            raise bad("headers", f"{name} is set by the tool (a key goes in api_key_env)")
        if _SECRET_HEADER.search(name):
            raise bad(
                "headers", f"{name} looks like a credential: name it in api_key_header, key in api_key_env"
            )
        if not isinstance(value, str) or not _HEADER_VALUE.match(value):
            raise bad("headers", f"{name}: the value must be a string of visible ASCII (no line breaks)")
    if key_header is not None and (
        not isinstance(key_header, str)
        or not _HEADER_NAME.match(key_header)
        or key_header.lower() in _TRANSPORT_HEADERS - {"authorization"}
    ):
        raise bad("api_key_header", f"{key_header!r} is not a header that can carry a key")


def _modalities(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not value or any(v not in MODALITIES for v in value):
        raise ConfigError(f"{where}: must be a non-empty list of {', '.join(MODALITIES)}")
    return tuple(dict.fromkeys(value))


def _omitting(data: dict[str, Any], omit: list[str], where: str) -> dict[str, Any]:
    """``data`` with the parameters named in ``omit`` set to None (not sent)."""
    bad = [o for o in omit if o not in OMITTABLE]
    if bad:
        raise ConfigError(f"{where}: cannot omit {bad[0]!r} (omittable: {', '.join(OMITTABLE)})")
    clash = [o for o in omit if data.get(o) is not None]
    if clash:
        raise ConfigError(f"{where}: {clash[0]} is both set and omitted")
    out = {**data, **{o: None for o in omit}}
    # A model that wants max_completion_tokens does not get the default max_tokens as well.
    if data.get("max_completion_tokens") is not None and "max_tokens" not in data:
        out["max_tokens"] = None
    return out


def public_url(url: str) -> str:
    """`url` without user:password@ and without query string (which may carry tokens)."""
    try:
        p = urlsplit(url)
        host = p.hostname or ""
        if p.port:
            host = f"{host}:{p.port}"
        return urlunsplit((p.scheme, host, p.path, "", ""))
    except ValueError:
        return "<invalid url>"


def load_config(path: str | os.PathLike) -> dict[str, ModelSpec]:
    """All models of a TOML config file, validated."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a UTF-8 text file (byte {exc.start}: {exc.reason})") from None
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise ConfigError(f"{path}: models: no [models.NAME] table")
    specs = {}
    for name, table in models.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: models.{name}: must be a table")
        specs[name] = ModelSpec.from_mapping(name, table, where=f"{path}: ")
    return specs


def get_model(path: str | os.PathLike, name: str) -> ModelSpec:
    specs = load_config(path)
    if name not in specs:
        raise ConfigError(f"{path}: models.{name}: no such model (have: {', '.join(sorted(specs))})")
    return specs[name]


# ---- keys ----------------------------------------------------------------------------------
@runtime_checkable
class KeyProvider(Protocol):
    """Supplies the secret for a spec at request time (None: send no Authorization header)."""

    def get_key(self, spec: ModelSpec) -> str | None: ...


class EnvKeyProvider:
    """Reads the key from the environment variable named by ``spec.api_key_env``."""

    def __init__(self, environ: dict[str, str] | None = None):
        self._environ = environ if environ is not None else os.environ

    def get_key(self, spec: ModelSpec) -> str | None:
        if not spec.api_key_env:
            return None
        value = self._environ.get(spec.api_key_env)
        if not value:
            raise ConfigError(
                f"models.{spec.name}.api_key_env: environment variable " f"{spec.api_key_env} is not set"
            )
        check_key(value, f"environment variable {spec.api_key_env}")
        return value

    def __repr__(self) -> str:
        return "EnvKeyProvider()"


def check_key(key: str, where: str) -> None:
    """ConfigError (naming ``where``, never the value) unless ``key`` can travel in an HTTP
    header: a key pasted with a line ending or a typographic quote would otherwise fail on every
    request, with the key itself in the error message."""
    if _KEY_CHARS.fullmatch(key):
        return
    if key.rstrip("\r\n") != key or key.lstrip("\r\n") != key:
        raise ConfigError(
            f"{where}: the key starts or ends with a line break (a key file with Windows line endings?); "
            "remove it"
        )
    if any(ord(c) > 126 for c in key):
        raise ConfigError(f"{where}: the key holds a non-ASCII character (a pasted typographic quote?)")
    raise ConfigError(f"{where}: the key holds a space or control character")


class StaticKeyProvider:
    """A fixed key (tests, plugin glue). Its repr never shows the key."""

    def __init__(self, key: str | None):
        self._key = key

    def get_key(self, spec: ModelSpec) -> str | None:
        return self._key

    def __repr__(self) -> str:
        return "StaticKeyProvider(<redacted>)"
