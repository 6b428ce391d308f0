"""`spatialgap export`: a built benchmark as a Hugging Face / Parquet / JSONL dataset that loads
with the real `datasets` and `pyarrow`, whose maps decode, and that a run takes as its benchmark
with the same requests, replies and verdicts as the benchmark itself."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil

import pytest

from scoring.errors import InputError, OutputError
from scoring.export import export_benchmark
from scoring.formats.benchmark import Benchmark
from scoring.formats.exported import COLUMNS
from scoring.formats.rundir import final_predictions
from scoring.runner.agents import start_server
from scoring.runner.config import ModelSpec
from scoring.runner.run import run_benchmark
from scoring.score.results import load_results, score_runs

pa = pytest.importorskip("pyarrow", reason="pyarrow is a test requirement (requirements.txt)")
pq = pytest.importorskip("pyarrow.parquet")
datasets = pytest.importorskip("datasets", reason="datasets is a test requirement (requirements.txt)")
PIL_Image = pytest.importorskip("PIL.Image")


@pytest.fixture(scope="module")
def bench(small_bench):
    return small_bench


@pytest.fixture(scope="module")
def exports(bench, tmp_path_factory):
    root = tmp_path_factory.mktemp("exports")
    return {f: export_benchmark(bench, root / f, fmt=f) for f in ("hf", "parquet", "jsonl")}


def test_hf_export_loads_with_datasets_and_its_maps_decode(bench, exports):
    b = Benchmark.open(bench)
    for task in ("qa", "edit"):
        ds = datasets.load_dataset(
            # a cache of its own: the shared one keys local files by path and may serve stale rows
            str(exports["hf"]),
            task,
            split="test",
            cache_dir=str(exports["hf"].parent / "hf-cache"),
        )
        assert ds.column_names == list(COLUMNS)
        assert [r for r in ds["id"]] == list(b.instances[task])
        assert isinstance(ds.features["map"], datasets.Image)
        row = ds[0]
        assert row["map"].size == (1536, 1536)  # a decoded PIL image
        png = (bench / "maps" / f"{row['id']}.png").read_bytes()
        assert row["map_sha256"] == hashlib.sha256(png).hexdigest()
        assert json.loads(row["instance"]) == b.get(row["id"])
    card = (exports["hf"] / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\nlicense: odbl\n") and "OpenStreetMap contributors" in card
    metric = [sum(1 for i in b.of_task(t) if i["family"] == "metric") for t in ("qa", "edit")]
    assert metric[0] > 2  # 2 answerable M01 questions and their unanswerable variant
    assert b.sha256 in card and f"| metric | {metric[0]} | {metric[1]} |" in card  # hashes and counts
    assert f"{b.manifest['unanswerable']['qa']} QA + {b.manifest['unanswerable']['edit']} editing" in card


def test_parquet_has_one_stable_typed_schema_and_round_trips_mixed_fields(bench, exports):
    b = Benchmark.open(bench)
    schemas = []
    for task in ("qa", "edit"):
        table = pq.read_table(exports["parquet"] / "data" / f"{task}.parquet")
        schemas.append(table.schema.remove_metadata())
        assert table.schema.field("map").type == pa.struct([("bytes", pa.binary()), ("path", pa.string())])
        assert table.schema.field("tolerance").type == pa.float64()
        for row in table.to_pylist():
            inst = b.get(row["id"])
            assert json.loads(row["scene"]) == inst["scene"]  # coordinates exactly as built
            assert json.loads(row["facts"]) == inst["facts"]  # mixed-type values
            if task == "qa":
                assert json.loads(row["answer_json"]) == inst["answer"]
                value = inst["answer"]  # typed: the column of its type holds it, as it is
                if isinstance(value, str):
                    assert row["answer_text"] == value and row["answer_number"] is None
                elif isinstance(value, list):
                    assert row["answer_list"] == [str(v) for v in value] and row["answer_text"] is None
                else:
                    assert row["answer_number"] == value and row["answer_text"] is None
            PIL_Image.open(io.BytesIO(row["map"]["bytes"])).verify()
    assert schemas[0] == schemas[1]  # the same columns and types in every file
    hf = pq.read_schema(exports["hf"] / "data" / "qa.parquet")
    assert hf.remove_metadata() == schemas[0] and b"huggingface" in hf.metadata


def test_jsonl_export_loads_with_datasets_and_names_its_maps(exports):
    ds = datasets.load_dataset(
        str(exports["jsonl"]), "edit", split="test", cache_dir=str(exports["jsonl"].parent / "hf-cache")
    )
    assert ds.column_names == list(COLUMNS)
    assert all((exports["jsonl"] / p).is_file() for p in ds["map"])


def test_a_run_takes_an_export_as_its_benchmark_with_the_same_results(bench, exports, tmp_path):
    srv, _ = start_server("tools")
    runs = {}
    try:
        spec = ModelSpec.from_endpoint(srv.base_url, "tools", timeout_s=30)
        for name, path in {"bench": bench, **exports}.items():
            runs[name] = []
            for modality, task in (("geojson", "qa"), ("image", "edit")):
                out = tmp_path / name / f"{modality}-{task}"
                s = run_benchmark(path, spec, modality, task, None, out, progress=False)
                assert s.failed == 0 and s.ok == s.samples > 0
                runs[name].append(out)
    finally:
        srv.shutdown()
        srv.server_close()
    verdicts = {}
    for name, path in {"bench": bench, **exports}.items():
        score_runs(path, runs[name], tmp_path / name / "results", selfcheck=False)
        _, rows = load_results(tmp_path / name / "results")
        verdicts[name] = sorted((r["id"], r["form"], r["modality"], r["verdict"], r["reason"]) for r in rows)
    assert verdicts["bench"]
    for name, v in verdicts.items():
        assert v == verdicts["bench"], name
    # the same requests (the key hashes what was sent) got the same replies
    sent = {
        name: {
            r["sample"]: (r["key"], r["text"]) for r in final_predictions(d / "predictions.jsonl").values()
        }
        for name, dirs in runs.items()
        for d in dirs[:1]
    }
    for name, by_sample in sent.items():
        assert by_sample == sent["bench"], name


def test_bad_rows_and_outputs_are_one_line_errors_naming_the_place(exports, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(exports["jsonl"], broken)
    path = broken / "data" / "qa.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), "instance": "{not json"})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"qa\.jsonl: row 2: the instance column is not JSON"):
        Benchmark.open(broken)
    with pytest.raises(OutputError, match="exists"):
        export_benchmark(exports["hf"], exports["jsonl"], fmt="jsonl")


def test_the_hf_export_loads_alone_with_one_split_per_task_maps_once_and_readable(bench, tmp_path):
    out = export_benchmark(bench, tmp_path / "hf", fmt="hf")
    ds = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))
    b = Benchmark.open(bench)
    assert set(ds) == {"qa", "edit"} and len(ds["qa"]) == len(b.of_task("qa"))
    row = next(r for r in ds["qa"] if isinstance(b.get(r["id"])["answer"], str))
    assert row["answer_text"] == b.get(row["id"])["answer"]  # compares as the user expects
    # maps once: in the Parquet map column, not again as files (sidecars and world files stay)
    assert not list((out / "maps").glob("*-qa-*.png"))
    assert list((out / "maps").glob("*.json"))
    mask = os.umask(0o022)
    os.umask(mask)
    assert (out.stat().st_mode & 0o777) == 0o777 & ~mask  # as mkdir makes it, not 0700
    Benchmark.open(out)  # a run's first opening restores the PNGs from the map column
    assert sorted(p.name for p in (out / "maps").glob("*.png")) == sorted(
        p.name for p in (bench / "maps").glob("*.png")
    )


def test_the_prompts_column_holds_the_messages_run_sends(bench, exports):
    from scoring.formats.exported import MAP_URL
    from scoring.runner.prompts import build_messages, map_data_url, with_image_detail

    b = Benchmark.open(bench)
    table = pq.read_table(exports["parquet"] / "data" / "qa.parquet", columns=["id", "prompts", "map"])
    for row in table.to_pylist()[:4]:
        prompts = json.loads(row["prompts"])
        assert {"geojson/open", "image/mcq", "together/open"} <= set(prompts)
        inst, png = b.get(row["id"]), row["map"]["bytes"]
        sent = with_image_detail(build_messages(inst, "image", "mcq", png), "high")
        shown = json.loads(json.dumps(prompts["image/mcq"]).replace(MAP_URL, map_data_url(png)))
        assert shown == sent
        assert prompts["geojson/open"] == build_messages(inst, "geojson", "open", None)
