"""Several images in one user turn (scoring.runner.images): order, labels, media types, and the
Ollama form the client derives from the same parts."""

import base64

import pytest

from scoring.runner.client import build_request
from scoring.runner.config import ModelSpec
from scoring.runner.images import image_data_url, user_content

PNG = b"\x89PNG\r\n\x1a\n" + b"png-body"
JPEG = b"\xff\xd8\xff\xe0" + b"jpeg-body"
WEBP = b"RIFF\x00\x00\x00\x00WEBPVP8 "


def test_text_then_images_in_order():
    parts = user_content("Which map shows the park?", [PNG, JPEG, "https://example.org/m.png"])
    assert parts[0] == {"type": "text", "text": "Which map shows the park?"}
    urls = [p["image_url"]["url"] for p in parts[1:]]
    assert urls[0] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert urls[1].startswith("data:image/jpeg;base64,")
    assert urls[2] == "https://example.org/m.png"
    assert image_data_url(WEBP).startswith("data:image/webp;base64,")


def test_labels_name_each_image_just_before_it():
    parts = user_content("Q", [PNG, PNG], labels=["Map 1", "Map 2"])
    assert [p["type"] for p in parts] == ["text", "text", "image_url", "text", "image_url"]
    assert [parts[1]["text"], parts[3]["text"]] == ["Map 1", "Map 2"]
    with pytest.raises(ValueError, match="1 labels for 2 images"):
        user_content("Q", [PNG, PNG], labels=["Map 1"])


@pytest.mark.parametrize("bad", [b"GIF", b"not an image", "file:///etc/passwd", "m.png"])
def test_refuses_what_is_not_an_image(bad):
    with pytest.raises(ValueError):
        user_content("Q", [bad])


def test_ollama_receives_every_image():
    messages = [{"role": "user", "content": user_content("Q", [PNG, JPEG])}]
    spec = ModelSpec.from_endpoint("http://127.0.0.1:11434", "m", kind="ollama")
    _, _, body = build_request(spec, messages, None)
    assert body["messages"][0]["images"] == [base64.b64encode(PNG).decode(), base64.b64encode(JPEG).decode()]
    spec = ModelSpec.from_endpoint("http://127.0.0.1:8000/v1", "m")
    _, _, body = build_request(spec, messages, None)
    assert [p["type"] for p in body["messages"][0]["content"]] == ["text", "image_url", "image_url"]
