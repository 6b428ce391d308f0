"""OpenAI-compatible chat completions (`POST {base_url}/chat/completions`): OpenAI, vLLM,
llama.cpp's server, LiteLLM, Ollama's `/v1`, most hosted APIs.

>>> from scoring.runner.config import ModelSpec
>>> spec = ModelSpec.from_endpoint("http://h/v1", "m")
>>> body = build_body(spec, [{"role": "user", "content": "hi"}], 7)
>>> body["seed"], body["temperature"], body["max_tokens"]
(7, 0.0, 1024)
>>> reply = Reply()
>>> read_reply({"choices": [{"message": {"content": "42"}, "finish_reason": "stop"}]}, reply)
>>> reply.text, reply.finish_reason
('42', 'stop')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scoring.answers.structured import SCHEMA_NAME
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

_USAGE = {
    "prompt_tokens": "prompt_tokens",
    "completion_tokens": "completion_tokens",
    "total_tokens": "total_tokens",
}


def build_body(spec: ModelSpec, messages: Messages, seed: int | None) -> dict[str, Any]:
    """The chat body: messages as given, each image part with the spec's `image_detail`
    unless the part names its own."""
    msgs = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            parts = []
            for p in content:
                if p.get("type") == "image_url":
                    iu = dict(p["image_url"])
                    iu.setdefault("detail", spec.image_detail)
                    p = {"type": "image_url", "image_url": iu}
                parts.append(p)
            content = parts
        msgs.append({**m, "content": content})
    body: dict[str, Any] = {"model": spec.model, "messages": msgs}
    set_params(
        body,
        (
            ("temperature", spec.temperature),
            ("max_tokens", spec.max_tokens),
            ("max_completion_tokens", spec.max_completion_tokens),
            ("seed", seed),
            ("top_p", spec.top_p),
        ),
    )
    return body


def read_reply(data: Mapping[str, Any], reply: Reply) -> None:
    """`choices[0].message`: its content (string or parts), reasoning under any of the names
    servers use, the finish reason, usage; an explicit `refusal` with no content says so."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ReplyError("bad_response", "response has no choices[0]")
    choice = choices[0]
    msg = choice.get("message") or {}
    if not isinstance(msg, dict):
        raise ReplyError("bad_response", "choices[0].message is not an object")
    text, reasoning = text_of(msg.get("content"))
    for key in ("reasoning_content", "reasoning", "thinking"):
        if isinstance(msg.get(key), str) and msg[key]:
            reasoning = msg[key] if reasoning is None else reasoning + msg[key]
            break
    finish = choice.get("finish_reason")
    reply.finish_reason = finish if isinstance(finish, str) else None
    reply.usage = clean_usage(data.get("usage"), _USAGE)
    reply.text, reply.reasoning = text, reasoning
    if text is None:
        refusal = msg.get("refusal")
        if isinstance(refusal, str) and refusal:
            # uncut: the client redacts the message before cutting it (a key echoed at the cut)
            raise ReplyError("refusal", f"model refused: {refusal}")
        raise ReplyError("no_content", "choices[0].message.content is null")


def ask_structured(body: dict[str, Any], schema: Mapping[str, Any]) -> None:
    """Structured output: `response_format` with the answer's JSON schema (strict)."""
    body["response_format"] = {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": dict(schema)},
    }


def model_names(data: Any) -> list[str]:
    """`GET /models`: `{"data": [{"id": ...}, ...]}`."""
    return names_in(data.get("data") if isinstance(data, dict) else None, "id", "name")


register(
    EndpointKind(
        name="openai",
        chat_path="/chat/completions",
        models_path="/models",
        build_body=build_body,
        read_reply=read_reply,
        model_names=model_names,
        ask_structured=ask_structured,
        help="OpenAI-compatible /chat/completions (vLLM, llama.cpp, LiteLLM, hosted APIs)",
    ),
)
