"""The domain's words, defined once: every stage, the plugin and the tests spell them from here.

Each is a ``StrEnum``, so a member *is* its string: ``Modality.IMAGE == "image"``, it serialises to
JSON as ``"image"`` and it can key a dict read back from a file.

>>> Modality("image") is Modality.IMAGE
True
>>> [str(m) for m in Modality]
['geojson', 'image', 'together', 'image-multi', 'image-context']
>>> Verdict.UNPARSED.counts_as_correct
False
"""

from __future__ import annotations

from enum import StrEnum


class Task(StrEnum):
    """What a model is asked to do with a scene."""

    QA = "qa"
    EDIT = "edit"


class Modality(StrEnum):
    """How the scene reaches the model."""

    GEOJSON = "geojson"  # the scene as GeoJSON in the task CRS; no image
    IMAGE = "image"  # the annotated 1536x1536 map; no coordinates in the text
    TOGETHER = "together"  # both
    # Cross-map settings, drawn from the same instances and oracle facts (scoring/formats/mapsets.py):
    IMAGE_MULTI = "image-multi"  # the scene split over two maps at different scales
    IMAGE_CONTEXT = "image-context"  # the instance's map among distractor maps of the same city

    @property
    def has_image(self) -> bool:
        return self is not Modality.GEOJSON

    @property
    def has_coordinates(self) -> bool:
        return self in (Modality.GEOJSON, Modality.TOGETHER)

    @property
    def pixel_edits(self) -> bool:
        """Edits are replied in the pixels of a map (no coordinates were given)."""
        return not self.has_coordinates

    @property
    def map_set(self) -> bool:
        """Several maps are sent, listed in a map-set file beside the maps."""
        return self in (Modality.IMAGE_MULTI, Modality.IMAGE_CONTEXT)


class QAForm(StrEnum):
    """How a question is put: an open answer or four lettered options."""

    OPEN = "open"
    MCQ = "mcq"


class Form(StrEnum):
    """The scored form of a sample: a QA form or an edit. Tables have one column per form."""

    OPEN = "open"
    MCQ = "mcq"
    EDIT = "edit"


class Protocol(StrEnum):
    """Which benchmark protocol a benchmark was built under: our own choices (the default) or the
    GeoSpatialBench paper's (O06 attributes on the map only, numeric options as adjacent
    intervals, topology also asked as a class, pixel-geometry edits on the map)."""

    SPATIALGAP = "spatialgap"
    PAPER = "paper"


class Family(StrEnum):
    """The four families of the 28 relations."""

    TOPOLOGY = "topology"
    DIRECTION = "direction"
    METRIC = "metric"
    ORDERING = "ordering"


class Verdict(StrEnum):
    """One verdict per scored sample. Only ``correct`` and ``correct_refusal`` count as right;
    every other verdict stays in the denominator."""

    CORRECT = "correct"
    WRONG = "wrong"
    UNPARSED = "unparsed"  # no single answer could be read: counted wrong, parse rate reported
    ERROR = "error"  # the request failed or the sample was never recorded: counted wrong
    CORRECT_REFUSAL = "correct_refusal"  # refused an instance unanswerable in its modality
    UNFOUNDED_ANSWER = "unfounded_answer"  # answered an instance unanswerable in its modality

    @property
    def counts_as_correct(self) -> bool:
        return self in (Verdict.CORRECT, Verdict.CORRECT_REFUSAL)


class TopologyClass(StrEnum):
    """A topology label: the DE-9IM class a topology-class question names (the paper protocol's
    labels), most specific first. Each is an exact GEOS predicate of (x, y); ``measure`` is the
    oracle measure that decides it, the only other spelling of these names.

    >>> TopologyClass("covered by").measure
    ('covered_by', False)
    """

    EQUALS = "equals"
    WITHIN = "within"
    CONTAINS = "contains"
    COVERED_BY = "covered by"
    COVERS = "covers"
    TOUCHES = "touches"
    CROSSES = "crosses"
    OVERLAPS = "overlaps"
    INTERSECTS = "intersects"
    DISJOINT = "disjoint"

    @property
    def measure(self) -> tuple[str, bool]:
        """(the oracle measure deciding the label, whether it takes (y, x) instead of (x, y))."""
        return _LABEL_MEASURES[self]


_LABEL_MEASURES: dict[TopologyClass, tuple[str, bool]] = {
    TopologyClass.EQUALS: ("equals", False),
    TopologyClass.WITHIN: ("within", False),
    TopologyClass.CONTAINS: ("within", True),
    TopologyClass.COVERED_BY: ("covered_by", False),
    TopologyClass.COVERS: ("covered_by", True),
    TopologyClass.TOUCHES: ("touches", False),
    TopologyClass.CROSSES: ("crosses", False),
    TopologyClass.OVERLAPS: ("overlaps", False),
    TopologyClass.INTERSECTS: ("intersects", False),
    TopologyClass.DISJOINT: ("disjoint", False),
}


class MarginClass(StrEnum):
    """The builder's class of a candidate with respect to an anchor, with clear margins
    (scoring.relations.common.classify): coarser than a TopologyClass and "ambiguous" where a 1 m
    tolerance could change it. Instances record the classes met under ``margin.classes`` in this
    spelling; ``label`` is the topology label a class gives the candidate.

    >>> MarginClass.BOUNDARY_COVERED.label
    <TopologyClass.WITHIN: 'within'>
    """

    DISJOINT = "disjoint"
    TOUCH = "touch"
    INSIDE = "inside"  # contained properly, clear of the boundary
    BOUNDARY_COVERED = "boundary_covered"  # covered, touching the boundary from inside
    OVERLAP = "overlap"
    CROSS = "cross"
    EQUAL = "equal"
    AMBIGUOUS = "ambiguous"

    @property
    def label(self) -> TopologyClass | None:
        return _MARGIN_LABELS.get(self)


_MARGIN_LABELS: dict[MarginClass, TopologyClass] = {
    MarginClass.EQUAL: TopologyClass.EQUALS,
    MarginClass.DISJOINT: TopologyClass.DISJOINT,
    MarginClass.TOUCH: TopologyClass.TOUCHES,
    MarginClass.INSIDE: TopologyClass.WITHIN,
    MarginClass.BOUNDARY_COVERED: TopologyClass.WITHIN,
    MarginClass.OVERLAP: TopologyClass.OVERLAPS,
    MarginClass.CROSS: TopologyClass.CROSSES,
}


class ReplyForm(StrEnum):
    """How an edit is replied: operations on F0, or (the paper protocol's map-image edits) the
    edited geometry in pixels with its attributes."""

    OPERATIONS = "operations"
    PIXEL_GEOMETRY = "pixel_geometry"


class PoolKind(StrEnum):
    """The feature pools an extract is read into."""

    ROAD = "road"
    BUILDING = "building"
    AREA = "area"
    POI = "poi"


class RunStatus(StrEnum):
    """A run directory's state in its manifest.

    >>> RunStatus("interrupted").finished
    False
    """

    RUNNING = "running"  # under way, or killed before it could say otherwise
    COMPLETE = "complete"  # every sample answered
    INCOMPLETE = "incomplete"  # ended with failed samples
    INTERRUPTED = "interrupted"  # stopped by Ctrl-C or SIGTERM; resumable

    @property
    def finished(self) -> bool:
        return self in (RunStatus.COMPLETE, RunStatus.INCOMPLETE)


class EditOp(StrEnum):
    """Operations an edit reply may apply to the target F0."""

    TRANSLATE = "translate"
    ROTATE = "rotate"
    SCALE = "scale"
    SET_ATTRIBUTE = "set_attribute"


GEOMETRY_OPS: tuple[EditOp, ...] = (EditOp.TRANSLATE, EditOp.ROTATE, EditOp.SCALE)


class AnswerType(StrEnum):
    """The type of an answer, which decides how a reply is read and checked."""

    CHOICE = "choice"
    DISTANCE = "distance"
    PERIMETER = "perimeter"
    AREA = "area"
    BEARING = "bearing"
    DENSITY = "density"
    COUNT = "count"
    DIRECTION4 = "direction4"
    DIRECTION8 = "direction8"
    RELATIVE_DIRECTION = "relative_direction"
    AXIS = "axis"
    FEATURE_ID = "feature_id"
    ORDERING = "ordering"
    YES_NO = "yes_no"
    TOPOLOGY_CLASS = "topology_class"  # a DE-9IM class name (the paper protocol's category form)
    EDIT = "edit"

    @property
    def is_quantity(self) -> bool:
        """Numeric answers, scored against a tolerance."""
        return self in _QUANTITIES


_QUANTITIES = frozenset(
    {
        AnswerType.DISTANCE,
        AnswerType.PERIMETER,
        AnswerType.AREA,
        AnswerType.BEARING,
        AnswerType.DENSITY,
        AnswerType.COUNT,
    }
)

TASKS: tuple[Task, ...] = tuple(Task)
# OSM keys whose presence makes a point a POI (the `poi` pool; a vector mapping's attributes too)
POI_KEYS = ("amenity", "shop", "tourism", "leisure", "office", "craft", "historic", "healthcare")
# A build's defaults, here so that `spatialgap build`'s options load without the catalogue:
DEFAULT_PER_RELATION = 25  # QA and editing instances per relation (700 + 700 over 28 relations)
DEFAULT_SHARE = 0.1  # unanswerable variants of each shard's answerable items, under spatialgap
PROTOCOLS: tuple[Protocol, ...] = tuple(Protocol)
MODALITIES: tuple[Modality, ...] = tuple(Modality)
# The paper's three modalities: what a sweep runs unless the cross-map ones are asked for.
BASE_MODALITIES: tuple[Modality, ...] = (Modality.GEOJSON, Modality.IMAGE, Modality.TOGETHER)
MAP_SET_MODALITIES: tuple[Modality, ...] = tuple(m for m in Modality if m.map_set)
QA_FORMS: tuple[QAForm, ...] = tuple(QAForm)
FORMS: tuple[Form, ...] = tuple(Form)
FAMILIES: tuple[Family, ...] = tuple(Family)
VERDICTS: tuple[Verdict, ...] = tuple(Verdict)
EDIT_OPS: tuple[EditOp, ...] = tuple(EditOp)
ANSWER_TYPES: tuple[AnswerType, ...] = tuple(AnswerType)
TOPOLOGY_CLASSES: tuple[TopologyClass, ...] = tuple(TopologyClass)
# The refusal an open answer gives, and the option a choice question offers for it.
REFUSAL = "cannot be determined"


def forms_of(task: Task | str) -> tuple[Form, ...]:
    """The scored forms of a task.

    >>> forms_of("qa")
    (<Form.OPEN: 'open'>, <Form.MCQ: 'mcq'>)
    """
    return (Form.EDIT,) if Task(task) is Task.EDIT else (Form.OPEN, Form.MCQ)
