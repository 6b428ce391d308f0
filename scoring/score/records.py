"""The score stage's typed records: a verdict row (one line of verdicts.jsonl) and the summary
(summary.json) with its cells, key for key as resources/schema/verdict.schema.json and
summary.schema.json state them (tests/score/test_score_records.py holds them to it)."""

from typing import Any, NotRequired, TypedDict

from scoring.vocab import Verdict


class VerdictRow(TypedDict):
    """One scored sample (instance x form x modality x model)."""

    id: str
    model: str
    task: str
    modality: str
    form: str
    verdict: Verdict
    reason: str
    relation: str | None
    family: str | None
    run: str
    city: NotRequired[str | None]
    answer_type: NotRequired[str | None]
    answerable: NotRequired[bool]
    scene: NotRequired[str]
    value: NotRequired[Any]
    quality: NotRequired[float | None]
    attempt: NotRequired[int | None]
    order_match: NotRequired[dict | None]
    screen: NotRequired[str | None]
    raster_tolerant: NotRequired[bool | None]
    constraints_passed: NotRequired[int]
    constraints_total: NotRequired[int]
    constraints_missed: NotRequired[list[str]]
    constraint_kinds: NotRequired[list[str]]
    sample_index: NotRequired[int]  # repeated sampling (samples = N): which repeat, from 0
    read_by: NotRequired[str]  # "rules" or "extractor", on the runs an extractor model read


class SummaryBenchmark(TypedDict):
    """The benchmark a summary scored."""

    manifest_sha256: str
    city: str | None
    protocol: str
    instances: dict[str, int]
    path: NotRequired[str]


class Cell(TypedDict):
    """One summary cell (scoring.score.tables.cell_stats under its grouping keys)."""

    level: str
    model: str
    modality: str
    form: str
    n: int
    correct: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    family: NotRequired[str]
    relation: NotRequired[str]
    city: NotRequired[str]
    ci_method: NotRequired[str]
    wrong: NotRequired[int]
    unparsed: NotRequired[int]
    error: NotRequired[int]
    correct_refusal: NotRequired[int]
    unfounded_answer: NotRequired[int]
    parse_rate: NotRequired[float | None]
    error_rate: NotRequired[float | None]
    n_answerable: NotRequired[int]
    answerable_only_accuracy: NotRequired[float | None]
    n_raster: NotRequired[int]
    raster_tolerant: NotRequired[int]
    raster_tolerant_rate: NotRequired[float | None]
    raster_ci_low: NotRequired[float | None]
    raster_ci_high: NotRequired[float | None]
    abs_error_n: NotRequired[int]
    abs_error_median: NotRequired[float | None]
    abs_error_p90: NotRequired[float | None]


class Summary(TypedDict):
    """summary.json of a RESULTS directory."""

    format: str
    created_at: str
    benchmark: SummaryBenchmark
    runs: list[dict[str, Any]]
    versions: dict[str, str | None]
    selfcheck: dict[str, Any] | None
    samples: int
    cells: list[Cell]
    run_conditions: NotRequired[list[dict[str, Any]]]
    scope: NotRequired[str]
    internal_errors: NotRequired[int]
    mcnemar: NotRequired[list[dict[str, Any]]]
    modality_gap: NotRequired[list[dict[str, Any]]]
    sample_agreement: NotRequired[list[dict[str, Any]]]
    verdicts_sha256: NotRequired[str]  # the verdicts.jsonl written with it (one set)
    extractor: NotRequired[list[dict[str, Any]]]  # per model: replies the extractor read, and after
