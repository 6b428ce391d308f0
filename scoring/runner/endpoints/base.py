"""The endpoint-kind record, its registry and the reading helpers every kind shares.

>>> text_of([{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "42"}])
('42', 'hm')
>>> clean_usage({"in": 3, "out": 2.0, "bad": "x"}, {"in": "prompt_tokens", "out": "completion_tokens"})
{'prompt_tokens': 3, 'completion_tokens': 2}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scoring.support.registry import Registry

if TYPE_CHECKING:  # the config imports this registry, so its spec is only a type here
    from scoring.runner.config import ModelSpec

Messages = list[dict[str, Any]]


class ReplyError(Exception):
    """A 2xx reply that holds no usable answer; `kind` is the journal's failure kind."""

    def __init__(self, kind: str, message: str, retryable: bool = False):
        super().__init__(message)
        self.kind, self.message, self.retryable = kind, message, retryable


@dataclass(kw_only=True)
class Reply:
    """What a kind reads from a 2xx JSON reply (the client copies it into its `Outcome`).
    `reasoning` may be set even when `text` is missing: the ReplyError then says why."""

    text: str | None = None
    reasoning: str | None = None
    usage: dict[str, int] | None = None
    endpoint_model: str | None = None
    finish_reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class EndpointKind:
    """One endpoint protocol.

    `build_body(spec, messages, seed)` turns OpenAI-style messages (image parts as data URLs)
    into the kind's request body, with `seed` in place of the spec's (repeated sampling);
    `read_reply(data, reply)` fills `reply` from a 2xx JSON object or raises ReplyError;
    `model_names(data)` lists the models of the `models_path` listing; `ask_structured(body,
    schema)` asks the body's reply to be a JSON object of `schema` (None: the kind cannot, and
    the request says so in words only)."""

    name: str
    chat_path: str
    models_path: str
    build_body: Callable[[ModelSpec, Messages, int | None], dict[str, Any]]
    read_reply: Callable[[Mapping[str, Any], Reply], None]
    model_names: Callable[[Any], list[str]]
    help: str = ""
    ask_structured: Callable[[dict[str, Any], Mapping[str, Any]], None] | None = None


ENDPOINT_KINDS: Registry[EndpointKind] = Registry("endpoint kind")


def register(kind: EndpointKind) -> EndpointKind:
    """Register `kind` under its name (a kind module's last statement)."""
    return ENDPOINT_KINDS.add(kind.name, kind)


def text_of(content: Any) -> tuple[str | None, str | None]:
    """(text, reasoning) of a message content that may be a string or a list of parts."""
    if content is None or isinstance(content, str):
        return content, None
    if isinstance(content, list):
        texts: list[str] = []
        reasoning: list[str] = []
        for p in content:
            if isinstance(p, str):
                texts.append(p)
            elif isinstance(p, dict):
                t = p.get("type")
                val = p.get("text") if isinstance(p.get("text"), str) else p.get("content")
                if not isinstance(val, str):
                    val = p.get("thinking") if isinstance(p.get("thinking"), str) else None
                if val is None:
                    continue
                (reasoning if t in ("reasoning", "thinking") else texts).append(val)
        return "".join(texts), ("".join(reasoning) or None)
    return str(content), None


def clean_usage(raw: Any, mapping: Mapping[str, str]) -> dict[str, int] | None:
    """Token counts of `raw` renamed by `mapping`; only finite numbers, as integers."""
    if not isinstance(raw, dict):
        return None
    out = {}
    for src, dst in mapping.items():
        v = raw.get(src)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            out[dst] = int(v)
    details = raw.get("completion_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("reasoning_tokens"), int):
        out["reasoning_tokens"] = details["reasoning_tokens"]
    return out or None


def set_params(target: dict[str, Any], pairs: tuple[tuple[str, Any], ...]) -> None:
    """Copy the generation parameters that are set (None means: not sent)."""
    for name, value in pairs:
        if value is not None:
            target[name] = value


def names_in(items: Any, *keys: str) -> list[str]:
    """The first of `keys` present in each listing entry (entries that are no objects skipped)."""
    names = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            name = next((item[k] for k in keys if item.get(k) is not None), None)
            if name is not None:
                names.append(str(name))
    return names
