"""Every typed record states what its schema in resources/schema/ states, key for key (instances,
journal records, verdicts, summaries), and every instance of a built benchmark fits its record."""

from __future__ import annotations

import json
from typing import get_type_hints

import pytest

from scoring.formats import records
from scoring.formats.journal import PredictionRecord
from scoring.paths import RESOURCES_DIR
from scoring.score import records as score_records


def _schema(name: str) -> dict:
    return json.loads((RESOURCES_DIR / "schema" / f"{name}.schema.json").read_text(encoding="utf-8"))


SCHEMA = _schema("instance")
SUMMARY = _schema("summary")


def _keys(td: type) -> tuple[set[str], set[str]]:
    return set(td.__required_keys__), set(td.__optional_keys__)


@pytest.mark.parametrize(
    ("record", "schema"),
    [
        (records.Instance, SCHEMA),
        (records.Fact, SCHEMA["$defs"]["fact"]),
        (records.Constraint, SCHEMA["$defs"]["constraint"]),
        (records.Crs, SCHEMA["properties"]["crs"]),
        (records.Information, SCHEMA["properties"]["information"]),
        (records.Provenance, SCHEMA["properties"]["provenance"]),
        (records.Edit, SCHEMA["$defs"]["edit"]),
        (PredictionRecord, _schema("prediction")),
        (score_records.VerdictRow, _schema("verdict")),
        (score_records.Summary, SUMMARY),
        (score_records.SummaryBenchmark, SUMMARY["properties"]["benchmark"]),
        (score_records.Cell, SUMMARY["$defs"]["cell"]),
    ],
    ids=lambda x: getattr(x, "__name__", ""),
)
def test_a_record_has_the_schemas_keys_and_required_keys(record, schema):
    required, optional = _keys(record)
    assert required | optional == set(schema["properties"])
    assert required == set(schema.get("required", ()))
    get_type_hints(record)  # every annotation resolves


def test_the_task_specific_fields_are_the_schemas_conditionals():
    by_task = {c["if"]["properties"]["task"]["const"]: c["then"]["required"] for c in SCHEMA["allOf"]}
    assert tuple(by_task["qa"]) == records.QA_FIELDS
    assert tuple(by_task["edit"]) == records.EDIT_FIELDS


def test_every_built_instance_fits_its_record(helsinki_bench):
    qa, edit = (
        [json.loads(line) for line in (helsinki_bench / f"{task}.jsonl").read_text().splitlines()]
        for task in ("qa", "edit")
    )
    allowed = set(records.Instance.__required_keys__) | set(records.Instance.__optional_keys__)
    for inst in [*qa, *edit]:
        assert set(inst) <= allowed, inst["id"]
        assert set(records.Instance.__required_keys__) <= set(inst), inst["id"]
        fields = records.QA_FIELDS if inst["task"] == "qa" else records.EDIT_FIELDS
        assert set(fields) <= set(inst), inst["id"]
        for fact in inst["facts"]:
            assert set(fact) <= set(records.Fact.__required_keys__) | set(records.Fact.__optional_keys__)
