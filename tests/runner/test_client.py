"""ChatClient against a real local fault-injecting HTTP server."""

import asyncio
import base64
import json
import socket
import time

import pytest
from runner_helpers import FAKE_KEY, fast_spec, tiny_png

from scoring.runner.client import (
    AdaptiveLimiter,
    ChatClient,
    Outcome,
    build_request,
    decode_body,
    parse_retry_after,
    parse_success,
    png_data_url,
)
from scoring.runner.config import ModelSpec, StaticKeyProvider
from scoring.runner.transport import ThreadedTransport, UrllibTransport

MSGS = [
    {"role": "system", "content": "sys"},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is F0?"},
            {"type": "image_url", "image_url": {"url": png_data_url(tiny_png())}},
        ],
    },
]


def complete(spec, transport=None, key=FAKE_KEY, messages=MSGS, **kw):
    async def go():
        c = ChatClient(spec, transport, StaticKeyProvider(key))
        try:
            return await c.complete(messages, **kw), c
        finally:
            await c.aclose()

    return asyncio.run(go())


def test_ok_openai(server):
    out, _ = complete(fast_spec(server.url("ok")))
    assert out.ok and out.text == "Answer: B" and out.endpoint_model == "fake-model-served"
    assert out.usage == {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
    assert server.auth_headers == [f"Bearer {FAKE_KEY}"]
    body = server.bodies[0]
    img = body["messages"][1]["content"][1]["image_url"]
    assert img["detail"] == "high" and img["url"].startswith("data:image/png;base64,")
    assert base64.b64decode(img["url"].split(",", 1)[1]) == tiny_png()
    assert body["temperature"] == 0.0 and body["seed"] == 0 and body["max_tokens"] == 1024


def test_ok_ollama(server):
    spec = ModelSpec.from_endpoint(server.url("ok", prefix=""), "llava", kind="ollama", timeout_s=2)
    out, _ = complete(spec, key=None)
    assert out.ok and out.text == "Answer: B" and out.usage["total_tokens"] == 14
    body = server.bodies[0]
    assert body["stream"] is False and body["options"]["num_predict"] == 1024
    user = body["messages"][1]
    assert user["content"] == "What is F0?" and base64.b64decode(user["images"][0]) == tiny_png()
    assert server.auth_headers == []


@pytest.mark.parametrize(
    "fault,n,ok,kind,attempts",
    [
        ("429", 2, True, None, 3),
        ("500", 2, True, None, 3),
        ("500", -1, False, "server_error", 4),
        ("reset", 1, True, None, 2),
        ("reset", -1, False, "reset", 4),
        ("truncated", -1, False, "truncated", 4),
        ("empty", -1, False, "empty_body", 4),
        ("garbage", -1, False, "bad_json", 1),
        ("huge", -1, False, "too_large", 1),
        ("400", -1, False, "client_error", 1),
    ],
)
def test_faults(server, fault, n, ok, kind, attempts):
    out, client = complete(fast_spec(server.url(fault, n)))
    assert out.ok is ok, out.error
    assert out.http_attempts == attempts
    if ok:
        assert out.text == "Answer: B"
    else:
        assert out.error["kind"] == kind and "\n" not in out.error["message"]
    if fault == "400":
        assert "model does not support images" in out.error["message"]
    if fault == "huge":
        assert "too large" in out.error["message"]
    if fault == "429":
        assert out.retries == {"rate_limited": 2} and client.limiter.decreases >= 1


def test_timeout_then_ok(server):
    spec = fast_spec(server.url("timeout", 1), timeout_s=0.3)
    t = time.perf_counter()
    out, _ = complete(spec)
    assert out.ok and out.retries == {"timeout": 1} and time.perf_counter() - t < 2.5


def test_retry_after_http_date(server):
    t = time.perf_counter()
    out, _ = complete(fast_spec(server.url("429date", 1)))
    assert out.ok and out.retries == {"rate_limited": 1}
    assert time.perf_counter() - t >= 1.0  # waited for the date (2 s ahead, 1 s resolution)


def test_parse_retry_after():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    now = 1_700_000_000
    assert parse_retry_after("Tue, 14 Nov 2023 22:13:40 GMT", now=now) == pytest.approx(20, abs=1)


def test_invalid_utf8_and_nan_are_recorded(server):
    out, _ = complete(fast_spec(server.url("badutf8")))
    assert out.ok and out.text == "Answer: B" and any("UTF-8" in w for w in out.warnings)
    out, _ = complete(fast_spec(server.url("nan")))
    assert out.ok and any("NaN" in w for w in out.warnings) and "prompt_tokens" not in out.usage


def test_unreachable_fails_fast():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    t = time.perf_counter()
    out, _ = complete(fast_spec(f"http://127.0.0.1:{port}/v1"), max_connect_retries=1)
    assert not out.ok and out.error["kind"] == "connect" and out.http_attempts == 2
    assert time.perf_counter() - t < 1.0
    assert FAKE_KEY not in json.dumps(out.to_record())


def test_sync_transport_adapter(server):
    tr = ThreadedTransport(UrllibTransport())
    out, _ = complete(fast_spec(server.url("ok")), transport=tr)
    assert out.ok and out.text == "Answer: B"
    out, _ = complete(fast_spec(server.url("500", 1)), transport=UrllibTransport())  # auto-wrapped
    assert out.ok and out.retries == {"server_error": 1}
    out, _ = complete(fast_spec(server.url("400")), transport=tr)
    assert out.error["kind"] == "client_error" and "support images" in out.error["message"]


def test_parse_content_parts_and_reasoning():
    out = Outcome(ok=False)
    parse_success(
        "openai",
        decode_body(
            json.dumps(
                {
                    "model": "m",
                    "choices": [
                        {
                            "message": {
                                "content": [
                                    {"type": "text", "text": "Answer: "},
                                    {"type": "text", "text": "C"},
                                ],
                                "reasoning_content": "because",
                            },
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": 5,
                        "completion_tokens": 2,
                        "completion_tokens_details": {"reasoning_tokens": 1},
                    },
                }
            ).encode(),
            [],
        ),
        out,
    )
    assert out.text == "Answer: C" and out.reasoning == "because" and out.usage["reasoning_tokens"] == 1


def test_build_request_params():
    import dataclasses

    spec = ModelSpec.from_endpoint("http://h/v1", "m", top_p=0.5, image_detail="low")
    spec = dataclasses.replace(spec, temperature=None)
    url, headers, body = build_request(spec, MSGS, None)
    assert url == "http://h/v1/chat/completions" and headers == {}
    assert "temperature" not in body and body["top_p"] == 0.5
    assert body["messages"][1]["content"][1]["image_url"]["detail"] == "low"
    assert "detail" not in MSGS[1]["content"][1]["image_url"]  # input not mutated


def test_adaptive_limiter_recovers():
    async def go():
        lim = AdaptiveLimiter(8)
        lim.on_rate_limited(0.0)
        assert lim.limit == 4
        lim.on_rate_limited(0.0)  # same burst: not halved again
        assert lim.limit == 4
        for _ in range(4):
            lim.on_success()
        assert lim.limit == 5
        await asyncio.sleep(0)

    asyncio.run(go())
