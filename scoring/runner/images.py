"""Several images in one user turn (OpenAI chat format): the text part, then one ``image_url``
part per image, in the order given. Shared by every prompt that shows more than one map (FRIEDA's
direct and contextual settings, multi-map and contextual instances), so that all send images the
same way; `client.build_request` turns the parts into the Ollama form when needed.

    content = user_content("Which park ...?", [png_a, png_b], labels=["Map 1", "Map 2"])
    messages = [{"role": "system", "content": system}, {"role": "user", "content": content}]

An image is given as its bytes (PNG, JPEG, GIF or WebP, recognised by their signature; sent as
a base64 data URL) or as a URL string already in data: or http(s): form (sent as it is).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

# File signatures -> media type; a data URL must name the real type (some servers check it).
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_media_type(data: bytes) -> str:
    """The media type of image bytes from their signature; ValueError when not an image we send."""
    for sig, media in _SIGNATURES:
        if data.startswith(sig):
            return media
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ValueError("not a PNG, JPEG, GIF or WebP image")


def image_data_url(data: bytes) -> str:
    """``data:<type>;base64,...`` for image bytes."""
    return f"data:{image_media_type(data)};base64,{base64.b64encode(data).decode('ascii')}"


def image_part(image: bytes | str) -> dict[str, Any]:
    """One ``image_url`` content part for image bytes or an existing data:/http(s): URL."""
    if isinstance(image, str):
        if not image.startswith(("data:image/", "http://", "https://")):
            raise ValueError("an image URL must be a data:image/ or http(s) URL")
        url = image
    else:
        url = image_data_url(bytes(image))
    return {"type": "image_url", "image_url": {"url": url}}


def user_content(
    text: str, images: Sequence[bytes | str], labels: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """User-turn content: ``text`` first, then the images in order. With ``labels`` (one per
    image), a short text part names each image just before it (e.g. "Map 2"), so that a reply
    can refer to a map by its label; without them the images follow the text directly."""
    if labels is not None and len(labels) != len(images):
        raise ValueError(f"{len(labels)} labels for {len(images)} images")
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for i, image in enumerate(images):
        if labels is not None:
            parts.append({"type": "text", "text": str(labels[i])})
        parts.append(image_part(image))
    return parts
