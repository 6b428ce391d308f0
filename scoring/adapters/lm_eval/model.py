"""`spatialgap-chat-completions`: lm-eval's local-chat-completions model, plus the one corrective
turn `spatialgap run` sends after an unusable edit reply (scoring.adapters.turns), which a
single-turn lm-eval task cannot send itself. Registered with lm-eval when imported: `python -m
scoring.adapters.lm_eval` imports it before handing over to lm-eval's command line."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from lm_eval.api.registry import register_model
from lm_eval.models.api_models import JsonChatStr
from lm_eval.models.openai_completions import LocalChatCompletion

from scoring.adapters.turns import corrective_turn
from scoring.vocab import Modality

MODEL = "spatialgap-chat-completions"


@register_model(MODEL)
class SpatialGapChatCompletions(LocalChatCompletion):
    """local-chat-completions; a Spatial Gap edit document whose reply is unusable is asked
    once more with run's corrective turn, and that reply is the one scored."""

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """The replies, corrected where `run` would correct them."""
        replies = list(super().generate_until(requests, disable_tqdm))
        again: list[tuple[int, Any]] = []
        for k, (req, reply) in enumerate(zip(requests, replies, strict=True)):
            follow_up = _follow_up(req, reply)
            if follow_up is not None:
                context = JsonChatStr(json.dumps(follow_up, ensure_ascii=False))
                again.append((k, dataclasses.replace(req, arguments=(context, *req.args[1:]))))
        if again:
            for (k, _), reply in zip(
                again, super().generate_until([r for _, r in again], disable_tqdm), strict=True
            ):
                replies[k] = reply
        return replies


def _follow_up(req: Any, reply: str) -> list[dict] | None:
    doc = req.doc if isinstance(req.doc, dict) else {}
    if doc.get("form") != "edit" or "instance" not in doc or not isinstance(req.args[0], JsonChatStr):
        return None
    messages = json.loads(req.args[0].prompt)
    return corrective_turn(
        json.loads(doc["instance"]), Modality(doc.get("modality", "geojson")), messages, reply
    )
