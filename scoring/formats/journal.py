"""What a run journal (predictions.jsonl) holds, typed: the identity of a request, from which its
key is derived, and the record of one attempt at it.

The journal on disk stays plain JSON lines (resources/schema/prediction.schema.json); these types
are what the runner builds and reads between its edges (`prediction_from_json` when a record is
read back, `dict(record)` when it is written).

>>> ident = RequestIdentity(model="m", kind="openai", base_url="http://h/v1", generation={},
...     template="qa-open-geojson", template_version="1", template_sha256="t",
...     instance_sha256="i", image_sha256=None, modality="geojson", form="open")
>>> ident.key == ident.corrective("r").key
False
"""

import dataclasses
import types
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NotRequired, TypedDict, cast

from scoring.support.files import canonical_json, sha256_hex

RECORD_VERSION = 1


@dataclass(frozen=True, kw_only=True)
class RequestIdentity:
    """Everything that determines one request, spelled once: its `key` (the journal's cache key)
    and the identity fields of its record are both derived from it."""

    model: str
    kind: str
    base_url: str
    generation: Mapping[str, Any]
    template: str
    template_version: str
    template_sha256: str
    instance_sha256: str
    image_sha256: str | None
    modality: str
    form: str
    attempt_kind: str = "initial"
    previous_reply_sha256: str | None = None
    sample_index: int = 0  # repeated sampling (a model's `samples`); 0 is the only one of a run of 1

    def __post_init__(self) -> None:
        if not isinstance(self.generation, types.MappingProxyType):  # a run's is frozen once, shared
            object.__setattr__(self, "generation", types.MappingProxyType(dict(self.generation)))

    @cached_property
    def key(self) -> str:
        """SHA-256 over the identity (canonical JSON). The sample index enters only from the
        second sample on, so a run of one sample keeps the keys journaled before it existed."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields["generation"] = dict(self.generation)
        fields["base_url"] = self.base_url.rstrip("/")
        if not self.sample_index:
            del fields["sample_index"]
        return sha256_hex(canonical_json({"v": RECORD_VERSION, **fields}))

    def corrective(self, previous_reply_sha256: str) -> "RequestIdentity":
        """The corrective turn sent after the reply with that digest."""
        return dataclasses.replace(
            self, attempt_kind="corrective", previous_reply_sha256=previous_reply_sha256
        )

    def with_template_sha256(self, template_sha256: str) -> "RequestIdentity":
        """The same request under another template checksum (an earlier version's)."""
        return dataclasses.replace(self, template_sha256=template_sha256)

    def record_fields(self) -> dict[str, Any]:
        """The identity's fields a journal record repeats (its key included)."""
        out: dict[str, Any] = {
            "key": self.key,
            "form": self.form,
            "modality": self.modality,
            "attempt_kind": self.attempt_kind,
            "template": self.template,
            "template_version": self.template_version,
            "template_sha256": self.template_sha256,
            "instance_sha256": self.instance_sha256,
            "image_sha256": self.image_sha256,
            "previous_reply_sha256": self.previous_reply_sha256,
        }
        return out


class PredictionRecord(TypedDict):
    """One journal line (resources/schema/prediction.schema.json, key for key)."""

    v: int
    key: str
    sample: str
    instance_id: str
    task: str
    form: str
    modality: str
    attempt: int
    model: str
    time: str
    status: str
    text: str | None
    final: bool
    sample_index: NotRequired[int]
    relation: NotRequired[str | None]
    attempt_kind: NotRequired[str]
    template: NotRequired[str]
    template_version: NotRequired[str]
    template_sha256: NotRequired[str]
    instance_sha256: NotRequired[str]
    image_sha256: NotRequired[str | None]
    previous_reply_sha256: NotRequired[str | None]
    model_name: NotRequired[str]
    endpoint_model: NotRequired[str | None]
    reasoning: NotRequired[str | None]
    usage: NotRequired[dict[str, Any] | None]
    finish_reason: NotRequired[str | None]
    error: NotRequired[str | dict[str, Any] | None]
    warnings: NotRequired[list[Any]]
    http_status: NotRequired[int | None]
    http_attempts: NotRequired[int | None]
    retries: NotRequired[dict[str, Any] | None]
    latency_s: NotRequired[float | None]
    retry_reason: NotRequired[str | None]
    cached_from: NotRequired[str]


# The reply fields of a record reused from another key (a cache's, or this journal's own under
# the checksum of an earlier version): everything the endpoint said, none of the request's identity.
REPLY_FIELDS = (
    "status",
    "text",
    "reasoning",
    "usage",
    "endpoint_model",
    "finish_reason",
    "error",
    "warnings",
    "http_status",
    "http_attempts",
    "retries",
    "latency_s",
    "time",
)


def prediction_from_json(value: Mapping[str, Any]) -> PredictionRecord:
    """A journal line read back as a record (its fields are the schema's; unknown ones, written
    by later versions, are kept and ignored)."""
    return cast(PredictionRecord, dict(value))


def sample_index_of(record: Mapping[str, Any]) -> int:
    """The repeated-sampling index of a record (0 when the run asked each item once)."""
    index = record.get("sample_index")
    return index if isinstance(index, int) and index > 0 else 0
