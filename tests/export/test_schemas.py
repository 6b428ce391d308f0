"""resources/schema/: the JSON Schemas of predictions, verdicts and summaries hold for what real
runs over loopback and the real scorer write, and reject what they must."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from scoring.paths import RESOURCES_DIR
from scoring.support.files import read_jsonl


def _validator(name: str) -> Draft202012Validator:
    schema = json.loads((RESOURCES_DIR / "schema" / f"{name}.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _errors(v: Draft202012Validator, value: dict) -> list[str]:
    return [e.message for e in v.iter_errors(value)]


def test_every_prediction_record_of_real_runs_is_valid(scored):
    runs, _ = scored
    v = _validator("prediction")
    records = [r for run in runs for _, r in read_jsonl(run / "predictions.jsonl")]
    assert len(records) > 40 and {r["modality"] for r in records} == {"geojson", "image"}
    for r in records:
        assert not _errors(v, r), (r["sample"], _errors(v, r))
    bad = {**records[0], "form": "essay"}
    del bad["key"]
    assert len(_errors(v, bad)) == 2


def test_every_verdict_row_and_the_summary_are_valid(scored):
    _, results = scored
    rows = [r for _, r in read_jsonl(results / "verdicts.jsonl")]
    v = _validator("verdict")
    assert {r["verdict"] for r in rows} >= {"correct", "wrong"}
    for r in rows:
        assert not _errors(v, r), (r["id"], _errors(v, r))
    assert _errors(v, {**rows[0], "verdict": "partly"})
    s = _validator("summary")
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    assert not _errors(s, summary)
    broken = {**summary, "cells": [{**summary["cells"][0], "accuracy": 1.5}]}
    assert _errors(s, broken)


@pytest.mark.parametrize("name", ["instance", "prediction", "verdict", "summary"])
def test_each_schema_is_valid_draft_2020_12_and_ships_with_the_package(name):
    _validator(name)
