import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

RELATIONS = ["D01", "D02", "D04", "D05", "D06", "M01", "M12", "M14", "M18", "O01", "O06", "T04"]


@pytest.fixture(scope="session")
def small_bench(tmp_path_factory) -> Path:
    """A real Helsinki benchmark over a dozen relations (3 QA + 3 edits each), with the maps of
    its edit instances rendered (image-modality edits need their sidecars)."""
    from scoring.build.builder import build_benchmark
    from scoring.render import render_benchmark

    out = tmp_path_factory.mktemp("scorebench") / "helsinki"
    build_benchmark(
        None,
        out,
        seed=0,
        n_qa=3,
        n_edit=3,
        relations=RELATIONS,
        jobs=1,
        progress=False,
        unanswerable_share=0.0,  # answerable items only: the variants have tests of their own
    )
    edit_ids = [json.loads(line)["id"] for line in (out / "edit.jsonl").read_text().splitlines()]
    render_benchmark(out, jobs=1, progress=False, ids=edit_ids)
    return out


def _load(path: Path) -> dict:
    return {d["id"]: d for d in map(json.loads, path.read_text().splitlines())}


@pytest.fixture(scope="session")
def qa(small_bench) -> dict:
    return _load(small_bench / "qa.jsonl")


@pytest.fixture(scope="session")
def edits(small_bench) -> dict:
    return _load(small_bench / "edit.jsonl")
