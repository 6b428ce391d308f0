"""What the reader is told about the instance a reply answers: the one place that turns an
instance and a form into a reading's answer type and context (the scorer and the extractor's
selection both read replies this way)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from scoring.vocab import AnswerType

_ID = re.compile(r"(?<![\w\-])[A-Z]{1,3}\d+(?![\w\-])")


def scene_ids(instance: Mapping[str, Any]) -> list[str]:
    """The ids of the instance's scene features, in scene order."""
    out = []
    scene: Mapping[str, Any] = instance.get("scene") or {}
    for f in scene.get("features", []):
        fid = f.get("id") or (f.get("properties") or {}).get("id")
        if fid:
            out.append(str(fid))
    return out


def ordered_ids(instance: Mapping[str, Any]) -> list[str]:
    """The ids an ordering question asks to order: its answer's, or on an unanswerable item (whose
    answer is a refusal and whose scene lacks one of them) those every option orders."""
    reference = instance.get("answer")
    if isinstance(reference, list):
        return sorted(map(str, reference))
    for choice in instance.get("choices") or []:
        ids = _ID.findall(str(choice))
        if ids:
            return sorted(ids)
    return scene_ids(instance)


def reading_context(instance: Mapping[str, Any], form: str) -> tuple[str, dict[str, Any]]:
    """(answer type, context) to read a reply to ``instance`` in ``form`` (``mcq`` or ``open``)."""
    context: dict[str, Any] = {"question": str(instance.get("question") or "")}
    choices = list(instance.get("choices") or []) if form == "mcq" else []
    if choices:
        context.update(n_options=len(choices), options=choices)
        return AnswerType.CHOICE, context
    answer_type = str(instance.get("answer_type") or "")
    if answer_type == AnswerType.FEATURE_ID:
        context["valid_ids"] = scene_ids(instance)
    elif answer_type == AnswerType.ORDERING:
        context["ids"] = ordered_ids(instance)
    return answer_type, context
