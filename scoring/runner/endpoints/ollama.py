"""Ollama's native chat API (`POST {base_url}/api/chat`, not streamed): images travel as
base64 strings beside the message's text, generation parameters under `options`.

>>> from scoring.runner.config import ModelSpec
>>> spec = ModelSpec.from_endpoint("http://h:11434", "m", kind="ollama")
>>> msg = {"role": "user", "content": [{"type": "text", "text": "hi"},
...        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}
>>> body = build_body(spec, [msg], 3)
>>> body["messages"], body["options"]["seed"], body["stream"]
([{'role': 'user', 'content': 'hi', 'images': ['AAAA']}], 3, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scoring.runner.endpoints.base import (
    EndpointKind,
    Messages,
    Reply,
    ReplyError,
    clean_usage,
    names_in,
    register,
    set_params,
    text_of,
)

if TYPE_CHECKING:
    from scoring.runner.config import ModelSpec


def build_body(spec: ModelSpec, messages: Messages, seed: int | None) -> dict[str, Any]:
    """Text parts joined by blank lines, image parts as base64 `images`, parameters as options
    (`num_predict` for either token limit)."""
    msgs = []
    for m in messages:
        content = m.get("content")
        out: dict[str, Any] = {"role": m["role"]}
        if isinstance(content, list):
            texts, images = [], []
            for p in content:
                if p.get("type") == "text":
                    texts.append(p.get("text", ""))
                elif p.get("type") == "image_url":
                    url = p["image_url"]["url"]
                    images.append(url.split(",", 1)[1] if url.startswith("data:") else url)
            out["content"] = "\n\n".join(texts)
            if images:
                out["images"] = images
        else:
            out["content"] = content or ""
        msgs.append(out)
    options: dict[str, Any] = {}
    set_params(
        options,
        (
            ("temperature", spec.temperature),
            ("num_predict", spec.max_tokens or spec.max_completion_tokens),
            ("seed", seed),
            ("top_p", spec.top_p),
        ),
    )
    return {"model": spec.model, "messages": msgs, "stream": False, "options": options}


def read_reply(data: Mapping[str, Any], reply: Reply) -> None:
    """`message.content` and `message.thinking`, `done_reason`, token counts from
    `prompt_eval_count` / `eval_count`."""
    msg = data.get("message")
    if not isinstance(msg, dict):
        raise ReplyError("bad_response", "response has no message object")
    text, reasoning = text_of(msg.get("content"))
    if isinstance(msg.get("thinking"), str) and msg["thinking"]:
        reasoning = msg["thinking"]
    done = data.get("done_reason")
    reply.finish_reason = done if isinstance(done, str) else None
    usage = clean_usage(data, {"prompt_eval_count": "prompt_tokens", "eval_count": "completion_tokens"})
    if usage and "total_tokens" not in usage:
        usage["total_tokens"] = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    reply.usage = usage
    reply.text, reply.reasoning = text, reasoning
    if text is None:
        raise ReplyError("no_content", "message.content is null")


def model_names(data: Any) -> list[str]:
    """`GET /api/tags`: `{"models": [{"name": ...}, ...]}`."""
    return names_in(data.get("models") if isinstance(data, dict) else None, "name", "model")


def ask_structured(body: dict[str, Any], schema: Mapping[str, Any]) -> None:
    """Structured output: Ollama's `format` with the answer's JSON schema."""
    body["format"] = dict(schema)


register(
    EndpointKind(
        name="ollama",
        chat_path="/api/chat",
        models_path="/api/tags",
        build_body=build_body,
        read_reply=read_reply,
        model_names=model_names,
        ask_structured=ask_structured,
        help="Ollama's native /api/chat",
    ),
)
