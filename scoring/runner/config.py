"""Model configuration: which endpoint, which model, which generation parameters.

A TOML file names models under ``[models.NAME]``::

    [models.qwen]
    kind = "openai"                    # or "ollama"
    base_url = "http://127.0.0.1:8000/v1"
    model = "Qwen2.5-VL-7B-Instruct"
    api_key_env = "QWEN_API_KEY"       # the NAME of an environment variable, never the key
    temperature = 0.0
    max_tokens = 1024
    seed = 0
    concurrency = 8

API keys never live in a spec: a `KeyProvider` hands them to the client at request time
(`EnvKeyProvider` reads the environment; the QGIS plugin supplies its auth-database one).
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit, urlunsplit

from scoring.errors import InputError

KINDS = ("openai", "ollama")
IMAGE_DETAILS = ("auto", "low", "high")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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
    concurrency: int = 8
    timeout_s: float = 120.0
    max_retries: int = 5
    image_detail: str = "high"
    # Retry pacing (not part of the request, so not part of the cache key).
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    max_retry_after_s: float = 300.0

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def from_mapping(cls, name: str, data: dict[str, Any], where: str = "") -> ModelSpec:
        prefix = f"{where}models.{name}"
        known = {f.name for f in fields(cls)} - {"name"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{prefix}.{unknown[0]}: unknown field (known: {', '.join(sorted(known))})")
        for required in ("kind", "base_url", "model"):
            if required not in data:
                raise ConfigError(f"{prefix}.{required}: missing required field")
        spec = cls(name=name, **data)
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
        """A spec for ``--endpoint URL --model NAME [--api-key-env VAR]`` (no config file)."""
        params = {k: v for k, v in params.items() if v is not None}
        spec = cls(
            name=name or model, kind=kind, base_url=url, model=model, api_key_env=api_key_env, **params
        )
        spec.validate("endpoint")
        return spec

    def validate(self, prefix: str = "model") -> None:
        def bad(field: str, why: str) -> ConfigError:
            return ConfigError(f"{prefix}.{field}: {why}")

        def number(
            field: str,
            lo: float | None = None,
            hi: float | None = None,
            integer: bool = False,
            optional: bool = True,
        ) -> None:
            value = getattr(self, field)
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

        if not isinstance(self.kind, str) or self.kind not in KINDS:
            raise bad("kind", f"must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not isinstance(self.model, str) or not self.model.strip():
            raise bad("model", "must be a non-empty string")
        if not isinstance(self.base_url, str):
            raise bad("base_url", f"expected a string, got {self.base_url!r}")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise bad("base_url", f"must be an http(s) URL, got {public_url(self.base_url)!r}")
        if parts.username or parts.password:
            raise bad("base_url", "must not contain credentials; use api_key_env")
        if self.api_key_env is not None and (
            not isinstance(self.api_key_env, str) or not _ENV_NAME.match(self.api_key_env)
        ):
            # Do not echo the value: a user may have pasted the key itself here.
            raise bad(
                "api_key_env",
                "must be the NAME of an environment variable (e.g. OPENAI_API_KEY), " "not the key itself",
            )
        number("temperature", 0, 10)
        number("top_p", 0, 1)
        number("max_tokens", 1, integer=True)
        number("seed", integer=True)
        number("concurrency", 1, 4096, integer=True, optional=False)
        number("timeout_s", 0.001, optional=False)
        number("max_retries", 0, 100, integer=True, optional=False)
        number("backoff_base_s", 0, optional=False)
        number("backoff_max_s", 0, optional=False)
        number("max_retry_after_s", 0, optional=False)
        if self.image_detail not in IMAGE_DETAILS:
            raise bad("image_detail", f"must be one of {', '.join(IMAGE_DETAILS)}, got {self.image_detail!r}")

    # ---- views ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The URL requests are POSTed to."""
        base = self.base_url.rstrip("/")
        return f"{base}/chat/completions" if self.kind == "openai" else f"{base}/api/chat"

    def generation_params(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "top_p": self.top_p,
            "image_detail": self.image_detail,
        }

    def public_dict(self) -> dict[str, Any]:
        """The spec as recorded in manifests (it never holds a key; URL credentials are stripped)."""
        d = asdict(self)
        d["base_url"] = public_url(self.base_url)
        return d


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
        return value

    def __repr__(self) -> str:
        return "EnvKeyProvider()"


class StaticKeyProvider:
    """A fixed key (tests, plugin glue). Its repr never shows the key."""

    def __init__(self, key: str | None):
        self._key = key

    def get_key(self, spec: ModelSpec) -> str | None:
        return self._key

    def __repr__(self) -> str:
        return "StaticKeyProvider(<redacted>)"


class Redactor:
    """Replaces known secrets in strings / nested JSON-like values."""

    def __init__(self, secrets: list[str | None] = ()):  # type: ignore[assignment]
        self._secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= 4 and secret not in self._secrets:
            self._secrets = sorted([*self._secrets, secret], key=len, reverse=True)

    def text(self, s: str) -> str:
        for secret in self._secrets:
            if secret in s:
                s = s.replace(secret, "<redacted>")
        return s

    def value(self, v: Any) -> Any:
        if not self._secrets:
            return v
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            return {self.value(k): self.value(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [self.value(x) for x in v]
        return v

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"
