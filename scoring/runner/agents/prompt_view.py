"""What an agent reads back from the prompts built by scoring.runner.prompts."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from scoring.runner.prompts import ANSWER_INSTRUCTIONS
from scoring.vocab import Task

# ---- reading the prompt back --------------------------------------------------------------------
# The answer instructions as the prompts state them, longest first so that no sentence is taken for
# a shorter one it contains.
_INSTRUCTION_CATEGORIES = sorted(ANSWER_INSTRUCTIONS.items(), key=lambda kv: -len(kv[1]))


@dataclass
class PromptView:
    """What an agent can recover from the prompts built by scoring.runner.prompts."""

    task: Task = Task.QA
    system: str = ""
    text: str = ""  # the first user turn's text
    scene: dict | None = None  # parsed GeoJSON (None in the image modality)
    question: str | None = None
    choices: list[str] = field(default_factory=list)
    answer_category: str = "text"
    target: str | None = None
    instruction: str | None = None
    units: str | None = None  # edits: "metres" | "pixels"
    image_png: bytes | None = None
    corrective: bool = False  # the last user turn is the corrective follow-up
    feature_ids: list[str] = field(default_factory=list)


def content_text(content: Any) -> tuple[str, bytes | None]:
    if isinstance(content, str):
        return content, None
    text, image = [], None
    for p in content or []:
        if isinstance(p, dict) and p.get("type") == "text":
            text.append(p.get("text", ""))
        elif isinstance(p, dict) and p.get("type") == "image_url" and image is None:
            url = (p.get("image_url") or {}).get("url", "")
            if url.startswith("data:") and "," in url:
                try:
                    image = base64.b64decode(url.split(",", 1)[1])
                except ValueError:
                    image = None
    return "\n".join(text), image


def parse_prompt(messages: list[dict]) -> PromptView:
    v = PromptView()
    users = [m for m in messages if m.get("role") == "user"]
    systems = [m for m in messages if m.get("role") == "system"]
    v.system = content_text(systems[0].get("content"))[0] if systems else ""
    if users:
        v.text, v.image_png = content_text(users[0].get("content"))
    v.corrective = len(users) > 1
    v.task = Task.EDIT if ("editing benchmark" in v.system or '"operations"' in v.text) else Task.QA
    m = re.search(r"```geojson\s*\n(.*?)\n```", v.text, flags=re.S)
    if m:
        try:
            v.scene = json.loads(m.group(1))
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
        v.units = "pixels" if "pixels right" in v.text else "metres"
    return v


def request_rng(messages: list[dict], extra: str = "") -> random.Random:
    """A deterministic RNG seeded by the request content."""
    h = hashlib.sha256((json.dumps(messages, sort_keys=True, ensure_ascii=False) + extra).encode("utf-8"))
    return random.Random(int.from_bytes(h.digest()[:8], "big"))
