"""The image request path stays what it was while doing less work: the agents' request seed is the
same digest as hashing the whole JSON, and the map's base64 is decoded only when asked for."""

import base64
import hashlib
import json
import random

import pytest
from runner_helpers import qa_instance

from scoring.runner.agents import parse_prompt
from scoring.runner.agents.prompt_view import request_digest, request_rng
from scoring.runner.agents.server import _usage
from scoring.runner.prompts import build_messages


def reference_digest(messages, extra=""):
    """What request_rng has always hashed."""
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False) + extra
    return hashlib.sha256(text.encode()).hexdigest()


def big_png(seed: int, n: int = 200_000) -> bytes:
    # incompressible bytes: a data URL longer than the fast path's threshold
    return b"\x89PNG\r\n\x1a\n" + random.Random(seed).randbytes(n)


def image_messages(seed: int = 0, text: str = "Question: which feature is nearest?"):
    url = "data:image/png;base64," + base64.b64encode(big_png(seed)).decode("ascii")
    return [
        {"role": "system", "content": "You answer questions about maps. Grüße, ÷ ± “quotes”"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": url, "detail": "high"}},
            ],
        },
    ]


@pytest.mark.parametrize(
    "messages",
    [
        image_messages(),
        image_messages(1, 'text with "quotes", a backslash \\ and a tab\t'),
        # the mark standing for a data URL, written by the prompt itself: the plain way is taken
        image_messages(2, "\ue000sg-blob-0\ue000 and \ue000sg-blob-7\ue000"),
        # two images, and a long string JSON must escape (newlines): hashed through JSON
        image_messages(3) + [{"role": "user", "content": "line\n" * 20_000}] + image_messages(4)[1:],
        # a long URL with a quote is not copied verbatim by JSON
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": 'x"' * 40_000}}]}],
        [{"role": "user", "content": "short"}],
    ],
)
@pytest.mark.parametrize("extra", ["", "tools:1"])
def test_request_digest_equals_hashing_the_whole_json(messages, extra):
    assert request_digest(messages, extra).hexdigest() == reference_digest(messages, extra)
    expected = random.Random(int(reference_digest(messages, extra)[:16], 16)).random()
    assert request_rng(messages, extra).random() == expected


def test_a_different_map_gives_a_different_seed():
    assert request_digest(image_messages(5)).digest() != request_digest(image_messages(6)).digest()


def test_parse_prompt_keeps_the_image_as_sent_and_decodes_on_demand():
    png = big_png(7)
    msgs = build_messages(qa_instance(1), "image", "open", png)
    v = parse_prompt(msgs)
    assert v.image_url is not None and v.image_url.startswith("data:image/png;base64,")
    assert v.image_png == png
    assert "Question:" in v.text and "base64" not in v.text
    assert parse_prompt(build_messages(qa_instance(1), "geojson", "open", None)).image_png is None


def test_usage_counts_text_only():
    msgs = image_messages(8, "x" * 400)
    usage = _usage("Answer: A", msgs)
    text_chars = len(msgs[0]["content"]) + 400
    assert usage["prompt_tokens"] == text_chars // 4
