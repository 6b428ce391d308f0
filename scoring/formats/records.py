"""Typed records of the benchmark files: the shapes `resources/schema/instance.schema.json` states,
for the type checker (tests/formats/test_records.py keeps the two in step, key for key).

An instance file holds JSON: these are dicts at run time, so reading a file costs nothing more.
The vocabulary's enums are StrEnums, equal to the strings the files hold.

>>> fact: Fact = {"measure": "min_distance", "args": ["F0", "F1"], "value": 12.5}
>>> fact["measure"]
'min_distance'
"""

from typing import Any, Literal, NotRequired, TypedDict

ConstraintOp = Literal["is", "between", "at_most", "at_least", "angle_within"]


class Crs(TypedDict):
    """The task CRS: a city-specific metric projection."""

    epsg: int
    name: str
    urn: str


class SceneCollection(TypedDict):
    """The scene as a GeoJSON FeatureCollection in the task CRS (ids F0, F1, ...)."""

    type: Literal["FeatureCollection"]
    crs: dict[str, Any]
    features: list[dict[str, Any]]


class Fact(TypedDict):
    """A measure evaluated on named features: what the oracle recorded."""

    measure: str
    args: list[str]
    value: Any
    params: NotRequired[dict[str, Any]]
    unit: NotRequired[str]
    state: NotRequired[Literal["initial", "reference_edit"]]


class Constraint(TypedDict):
    """A condition an edit must meet: a measure compared by `op` with a value or bounds."""

    measure: str
    args: list[str]
    op: ConstraintOp
    params: NotRequired[dict[str, Any]]
    value: NotRequired[Any]
    min: NotRequired[float]
    max: NotRequired[float]
    target: NotRequired[float]
    tolerance: NotRequired[float]
    unit: NotRequired[str]


class EditOperation(TypedDict, total=False):
    """One operation of an edit reply (translate, rotate, scale, set_attribute) and its fields."""

    op: str
    dx: float
    dy: float
    degrees_clockwise: float
    origin: Any
    factor: float
    name: str  # set_attribute: the property set (the prompts and the reader say "name")
    value: Any


class Edit(TypedDict):
    """An edit: its operations, applied in order to F0."""

    operations: list[EditOperation]


class Information(TypedDict):
    """Which feature attributes the scene carries and which were withheld."""

    attributes: list[str]
    withheld: list[str]
    withheld_from: NotRequired[dict[str, list[str]]]  # by modality, where it differs


class Provenance(TypedDict):
    """Where the scene came from: the extract's hash and each feature's OSM source."""

    source_sha256: str
    features: Any


class Instance(TypedDict):
    """One benchmark instance (a line of qa.jsonl or edit.jsonl). QA instances carry the
    question fields, editing instances the edit fields (the schema's allOf)."""

    id: str
    city: str
    task: Literal["qa", "edit"]
    relation: str
    family: Literal["topology", "direction", "metric", "ordering"]
    crs: Crs
    scene: SceneCollection
    information: Information
    facts: list[Fact]
    margin: dict[str, Any]
    provenance: Provenance
    # QA
    question: NotRequired[str]
    answer_type: NotRequired[str]
    answer: NotRequired[Any]
    unit: NotRequired[str | None]
    tolerance: NotRequired[float | None]
    choices: NotRequired[list[str]]
    correct_choice: NotRequired[Literal["A", "B", "C", "D"] | None]  # None: an unanswerable variant
    answerable: NotRequired[dict[str, bool]]
    information_sufficient: NotRequired[dict[str, bool]]  # the paper's O06 rule, per modality
    unanswerable: NotRequired[dict[str, Any]]  # kind, reason, modalities, sibling + re-check facts
    # the paper protocol's fields
    protocol: NotRequired[Literal["paper"]]
    map_properties: NotRequired[dict[str, dict[str, Any]]]
    edit_reply: NotRequired[dict[str, str]]
    # editing
    target: NotRequired[str]  # "F0" in a file (the schema's const); a relabelled distractor map names another
    instruction: NotRequired[str]
    constraints: NotRequired[list[Constraint]]
    allowed_operations: NotRequired[list[str]]
    reference_edit: NotRequired[Edit]


QA_FIELDS: tuple[str, ...] = (
    "question",
    "answer_type",
    "answer",
    "unit",
    "tolerance",
    "choices",
    "correct_choice",
    "answerable",
)
EDIT_FIELDS: tuple[str, ...] = (
    "target",
    "instruction",
    "constraints",
    "allowed_operations",
    "reference_edit",
)
