"""Structured answers (``--answer-format json``): the JSON object a model is asked for, by answer
type, and the sentence that asks for it.

The schema is sent as the endpoint kind's structured-output request (OpenAI's ``response_format``
with a JSON schema, Ollama's ``format``); a server that ignores it gets the same request in
words. The reader needs nothing new: it reads a JSON object's ``answer`` first, and a reply that
is not the object is read as free text. ``cannot_be_determined: true`` is a refusal.

>>> schema = answer_schema("choice", ["12 m", "40 m", "95 m", "cannot be determined"])
>>> schema["properties"]["answer"]
{'type': 'string', 'enum': ['A', 'B', 'C', 'D']}
>>> answer_schema("count", None)["properties"]["answer"]
{'type': 'integer', 'minimum': 0}
>>> from scoring.answers import parse_answer
>>> parse_answer('{"answer": null, "cannot_be_determined": true}', "distance").refusal
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from scoring.answers.formats import ANSWER_FORMATS
from scoring.vocab import AnswerType

ANSWER_FORMAT_CHOICES = ("text", "json")  # how a model is asked to answer; text is the paper's
SCHEMA_NAME = "spatialgap_answer"


def answer_schema(answer_type: str, choices: Sequence[str] | None) -> dict[str, Any]:
    """The JSON schema of a structured answer: ``answer`` (the value, by answer type; an option
    letter when ``choices`` are offered) and ``cannot_be_determined`` (a refusal), both required."""
    if choices:
        value: dict[str, Any] = {"type": "string", "enum": [chr(ord("A") + i) for i in range(len(choices))]}
    else:
        value = dict(ANSWER_FORMATS[AnswerType(answer_type)].value_schema)
    return {
        "type": "object",
        "properties": {"answer": value, "cannot_be_determined": {"type": "boolean"}},
        "required": ["answer", "cannot_be_determined"],
        "additionalProperties": False,
    }


def json_request(schema: dict[str, Any]) -> str:
    """The sentence that asks for the object in words (for servers without structured output)."""
    example = {"answer": "...", "cannot_be_determined": False}
    return (
        "Reply with only a JSON object, no other text, matching this JSON schema: "
        f"{json.dumps(schema, separators=(',', ':'))}. For example: {json.dumps(example)}. "
        'If the answer cannot be determined, set "cannot_be_determined" to true.'
    )
