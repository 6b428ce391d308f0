"""The typed records of scoring.formats.records state what the instance schema states, key for
key, and every instance of a built benchmark fits them."""

from __future__ import annotations

import json
from typing import get_type_hints

import pytest

from scoring.formats import records
from scoring.paths import RESOURCES_DIR

SCHEMA = json.loads((RESOURCES_DIR / "schema" / "instance.schema.json").read_text(encoding="utf-8"))


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


def test_the_journal_record_has_the_prediction_schemas_keys():
    from scoring.formats.journal import PredictionRecord

    schema = json.loads((RESOURCES_DIR / "schema" / "prediction.schema.json").read_text(encoding="utf-8"))
    required, optional = _keys(PredictionRecord)
    assert required | optional == set(schema["properties"])
    assert required == set(schema["required"])
    get_type_hints(PredictionRecord)
