"""What `spatialgap run` sends, for the framework adapters (no framework imported here): the
messages of a sample with each image part's `detail` as the run's endpoint body sets it, and the
one corrective turn an unusable edit reply gets. The inspect_ai task and the lm-eval tasks use
these, so a sample's prompts, and hence its verdict, are the same in every harness
(tests/adapters/test_harnesses_agree.py)."""

from __future__ import annotations

from typing import Any

from scoring.formats.records import Instance
from scoring.runner.config import ModelSpec
from scoring.runner.prompts import build_messages, corrective_messages, with_image_detail
from scoring.runner.run import edit_needs_retry
from scoring.vocab import Modality, Task

# `run`'s default (ModelSpec.image_detail), set on image parts that name none (endpoints/openai.py)
IMAGE_DETAIL: str = str(ModelSpec.__dataclass_fields__["image_detail"].default)


def sample_messages(
    instance: Instance, modality: Modality, form: str | None, image: Any, detail: str = IMAGE_DETAIL
) -> list[dict]:
    """The chat messages `run` sends for one sample (OpenAI format), image detail included."""
    task_form = None if instance["task"] == Task.EDIT else form
    return with_image_detail(build_messages(instance, modality, task_form, image), detail)


def corrective_turn(
    instance: Instance, modality: Modality, messages: list[dict], reply: str | None
) -> list[dict] | None:
    """The messages of the corrective turn `run` sends after an unusable edit reply (the first
    messages, the reply, the corrective user turn), or None when the reply needs none (a QA
    sample, a usable edit, no reply)."""
    if instance["task"] != Task.EDIT or reply is None:
        return None
    reason = edit_needs_retry(reply, instance, modality)
    if not reason:
        return None
    return corrective_messages(instance, modality, messages, reply, reason)
