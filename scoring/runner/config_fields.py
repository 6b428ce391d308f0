"""What each field of a `[models.NAME]` block means, beside the config's own definitions: the
README's field table is generated from `ModelSpec`'s fields, their defaults and `FIELD_HELP`
(`make config-table`), and a test fails when a field has no help or the README's table is stale.

>>> print(config_table().splitlines()[4])
| `model` | required | the model id the endpoint serves |
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any

from scoring.runner.config import IMAGE_DETAILS, OMITTABLE, ModelSpec
from scoring.runner.endpoints import endpoint_kinds
from scoring.vocab import MODALITIES

FIELD_HELP: dict[str, str] = {
    "kind": "the endpoint protocol: {kinds}",
    "base_url": "the base URL; the kind's path is appended (a query such as `?api-version=` is kept); "
    "never a credential",
    "model": "the model id the endpoint serves",
    "api_key_env": "the NAME of the environment variable holding the key (the key is never written)",
    "api_key_header": "the header that carries the key as it is (Azure's `api-key`); unset: "
    "`Authorization: Bearer KEY`",
    "temperature": "sampling temperature, 0 to 10",
    "max_tokens": "reply token limit (`num_predict` for Ollama)",
    "max_completion_tokens": "sent instead of max_tokens (o-series, GPT-5 family); not both",
    "seed": "sampling seed; the k-th repeated sample sends seed + k",
    "top_p": "nucleus sampling, 0 to 1",
    "omit": "generation parameters never sent: " + ", ".join(OMITTABLE),
    "extra_body": "request parameters merged into every body, tables key by key "
    '(`{ reasoning_effort = "low" }`, `{ chat_template_kwargs = { enable_thinking = false } }`, '
    "Ollama's `{ options = { num_ctx = 8192 } }`); part of the request key",
    "headers": 'extra HTTP headers (`{ "X-Title" = "spatialgap" }`); values never recorded, '
    "credentials refused (use api_key_env)",
    "modalities": "what the model can read; `evaluate` runs only these: " + ", ".join(MODALITIES),
    "image_detail": "the image parts' `detail` (OpenAI): " + ", ".join(IMAGE_DETAILS),
    "concurrency": "requests in flight at most (the adaptive limit halves on a 429)",
    "timeout_s": "one deadline for a whole exchange: connect, headers, body",
    "max_retries": "retries of a sample after a retryable failure (5xx, reset, truncated, connect; "
    "a timeout once; a 429 at least 8 times), from one budget per run",
    "backoff_base_s": "first backoff before a retry; doubles each time, jittered",
    "backoff_max_s": "the longest single backoff",
    "max_retry_after_s": "the longest single wait on a Retry-After (a longer one is cut to it)",
    "max_wait_s": "all the waiting (Retry-After, backoff) one sample may do",
    "price_in": "price per million input tokens, for the report's cost",
    "price_out": "price per million output tokens, for the report's cost",
    "samples": "times each item is asked (repeated sampling; agreement and variance in the report)",
}


def _default(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, tuple):
        return "all" if value == MODALITIES else ", ".join(map(str, value))
    return f"`{value}`"


def config_table() -> str:
    """The README's markdown table of every `[models.NAME]` field: name, default, meaning."""
    kinds = ", ".join(f"`{k.name}` ({k.help})" for k in endpoint_kinds().values())
    rows = ["| field | default | meaning |", "|---|---|---|"]
    names = [f for f in fields(ModelSpec) if f.name != "name"]
    for f in names:
        if f.default is not MISSING:
            default = _default(f.default)
        elif f.default_factory is not MISSING:
            default = "none"
        else:
            default = "required"
        meaning = FIELD_HELP[f.name].replace("{kinds}", kinds)
        rows.append(f"| `{f.name}` | {default} | {meaning} |")
        if f.name == "top_p":
            rows.append(f"| `omit` | none | {FIELD_HELP['omit']} |")
    return "\n".join(rows)
