"""What an agent reads back from the prompts built by scoring.runner.prompts."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from scoring.runner.agents.request_body import verbatim_bytes
from scoring.runner.prompts import ANSWER_INSTRUCTIONS
from scoring.vocab import Task

# ---- reading the prompt back --------------------------------------------------------------------
# The answer instructions as the prompts state them, longest first so that no sentence is taken for
# a shorter one it contains.
_INSTRUCTION_CATEGORIES = [
    *sorted(ANSWER_INSTRUCTIONS.items(), key=lambda kv: -len(kv[1])),
    # the paper protocol's choice instruction names the letters only (resources/prompts/_common.j2)
    ("choice", "Answer with the option letter only ("),
]


@dataclass
class PromptView:
    """What an agent can recover from the prompts built by scoring.runner.prompts."""

    task: Task = Task.QA
    system: str = ""
    text: str = ""  # the first user turn's text
    scene: dict | None = None  # parsed GeoJSON (None in the image modality)
    scene_text: str | None = None  # the GeoJSON as written in the prompt (what `scene` is parsed from)
    question: str | None = None
    choices: list[str] = field(default_factory=list)
    answer_category: str = "text"
    target: str | None = None
    instruction: str | None = None
    units: str | None = None  # edits: "metres" | "pixels" | "pixel_geometry"
    image_url: str | None = None  # the first image part as sent (a data URL), decoded on demand
    corrective: bool = False  # the last user turn is the corrective follow-up
    feature_ids: list[str] = field(default_factory=list)

    @property
    def image_png(self) -> bytes | None:
        """The first image's bytes. Decoded only when asked: no built-in agent reads the pixels,
        and decoding a 1536² map's megabyte of base64 on every request was most of an image
        request's cost."""
        return decode_data_url(self.image_url)


def message_text(content: Any) -> str:
    """The text parts of a message's content; image parts are skipped, never decoded."""
    if isinstance(content, str):
        return content
    return "\n".join(
        p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text"
    )


def first_image_url(content: Any) -> str | None:
    """The URL of the first image part of a message's content, as sent."""
    if isinstance(content, str):
        return None
    for p in content or []:
        if isinstance(p, dict) and p.get("type") == "image_url":
            return (p.get("image_url") or {}).get("url", "")
    return None


def decode_data_url(url: str | None) -> bytes | None:
    """The bytes of a base64 data URL (None for anything else or undecodable)."""
    if not url or not url.startswith("data:") or "," not in url:
        return None
    try:
        return base64.b64decode(url.split(",", 1)[1])
    except ValueError:
        return None


def content_text(content: Any) -> tuple[str, bytes | None]:
    """(the text parts, the first image's bytes) of a message's content."""
    return message_text(content), decode_data_url(first_image_url(content))


def parse_prompt(messages: list[dict]) -> PromptView:
    v = PromptView()
    users = [m for m in messages if m.get("role") == "user"]
    systems = [m for m in messages if m.get("role") == "system"]
    v.system = message_text(systems[0].get("content")) if systems else ""
    if users:
        v.text = message_text(users[0].get("content"))
        v.image_url = first_image_url(users[0].get("content"))
    v.corrective = len(users) > 1
    v.task = Task.EDIT if _is_edit(v.system, v.text) else Task.QA
    m = re.search(r"```geojson\s*\n(.*?)\n```", v.text, flags=re.S)
    if m:
        v.scene_text = m.group(1)
        try:
            v.scene = json.loads(v.scene_text)
        except ValueError:
            v.scene = None
    if isinstance(v.scene, dict):
        v.feature_ids = [
            str(f.get("id"))
            for f in v.scene.get("features", [])
            if isinstance(f, dict) and f.get("id") is not None
        ]
    if not v.feature_ids:
        v.feature_ids = sorted(set(re.findall(r"\bF\d+\b", v.text)), key=lambda s: int(s[1:]))
    m = re.search(r"^Question: (.*?)(?:\n\n|\Z)", v.text, flags=re.S | re.M)
    v.question = m.group(1).strip() if m else None
    v.choices = [c for _, c in re.findall(r"^([A-D])\. (.*)$", v.text, flags=re.M)]
    q = v.text.rfind("\nQuestion: ")
    after_question = v.text[q:] if q >= 0 else v.text
    for cat, sentence in _INSTRUCTION_CATEGORIES:
        if sentence in after_question:
            v.answer_category = cat
            break
    m = re.search(r"^Target feature: (\S+)", v.text, flags=re.M)
    v.target = m.group(1) if m else None
    # The instruction runs over several lines (numbered constraints), up to the reply format.
    m = re.search(r"^Instruction: (.*?)(?:\n\nReply with|\Z)", v.text, flags=re.M | re.S)
    v.instruction = m.group(1).strip() if m else None
    if v.task == "edit":
        # the paper protocol's map-image edits: an edited pixel geometry (+ attributes)
        v.units = (
            "pixel_geometry"
            if '"pixel_geometry"' in v.text
            else ("pixels" if "pixels right" in v.text else "metres")
        )
    return v


def _is_edit(system: str, text: str) -> bool:
    return "editing benchmark" in system or '"operations"' in text


def is_edit_request(messages: list[dict]) -> bool:
    """Whether parse_prompt reads `messages` as an edit (without reading the rest)."""
    system = next((m for m in messages if m.get("role") == "system"), None)
    user = next((m for m in messages if m.get("role") == "user"), None)
    return _is_edit(
        message_text(system.get("content")) if system is not None else "",
        message_text(user.get("content")) if user is not None else "",
    )


def request_rng(messages: list[dict], extra: str = "") -> random.Random:
    """A deterministic RNG seeded by the request content: SHA-256 of the messages' JSON (sorted
    keys, UTF-8) followed by `extra`."""
    h = request_digest(messages, extra)
    return random.Random(int.from_bytes(h.digest()[:8], "big"))


# Bytes a JSON string may hold unescaped (printable ASCII but the quote and the backslash): a data
# URL made only of them is its own JSON text between quotes.
_JSON_VERBATIM = bytes(c for c in range(0x20, 0x7F) if c not in b'"\\')
_BIG_STRING = 1 << 16  # strings this long (the maps' data URLs) are hashed without JSON-encoding
_SLOT = "\ue000sg-blob-{}\ue000"  # a private-use mark standing for one such string
_SLOT_RE = re.compile("\ue000sg-blob-(\\d+)\ue000")


def request_digest(messages: list[dict], extra: str = "") -> Any:
    """hashlib.sha256((json.dumps(messages, sort_keys=True, ensure_ascii=False) + extra)
    .encode()), the same digest, but the megabyte data URL of a map is fed to the hash as it is
    instead of being copied through the JSON encoder on every request (that copy was most of an
    image request's cost in the chance agent)."""
    blobs: list[bytes | memoryview] = []
    light = _without_blobs(messages, blobs)
    text = json.dumps(light, sort_keys=True, ensure_ascii=False) + extra
    parts = _SLOT_RE.split(text) if blobs else [text]
    expected = [str(i) for i in range(len(blobs))]
    if parts[1::2] != expected:  # the text itself held a mark: hash the plain way
        return hashlib.sha256((json.dumps(messages, sort_keys=True, ensure_ascii=False) + extra).encode())
    h = hashlib.sha256(parts[0].encode("utf-8"))
    for blob, after in zip(blobs, parts[2::2], strict=True):
        h.update(blob)
        h.update(after.encode("utf-8"))
    return h


def _without_blobs(value: Any, blobs: list[bytes | memoryview]) -> Any:
    """`value` with each long string that JSON would copy verbatim replaced by a mark; the
    strings' bytes are appended to `blobs` in the order json.dumps(sort_keys=True) meets them."""
    if isinstance(value, str):
        if len(value) < _BIG_STRING:
            return value
        read = verbatim_bytes(value)  # checked when the request body was read
        if read is not None:
            blobs.append(read)
            return _SLOT.format(len(blobs) - 1)
        if value.isascii():
            raw = value.encode("ascii")
            if not raw.translate(None, _JSON_VERBATIM):
                blobs.append(raw)
                return _SLOT.format(len(blobs) - 1)
        return value
    if isinstance(value, dict):
        return {k: _without_blobs(value[k], blobs) for k in sorted(value)} if _all_str(value) else value
    if isinstance(value, list):
        return [_without_blobs(v, blobs) for v in value]
    return value


def _all_str(d: dict) -> bool:
    # json.dumps sorts only string keys the way `sorted` does; anything else is left whole
    return all(isinstance(k, str) for k in d)
