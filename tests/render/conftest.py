import json
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from render_synthetic import make_bench


@pytest.fixture(scope="session")
def bench(tmp_path_factory) -> Path:
    """Synthetic benchmark rendered once, through the parallel (spawn) path."""
    from scoring.render import render_benchmark

    path = make_bench(tmp_path_factory.mktemp("bench") / "helsinki")
    summary = render_benchmark(path, jobs=2, progress=False)
    assert len(summary.rendered) == 7
    return path


@pytest.fixture(scope="session")
def instances(bench) -> dict:
    out = {}
    for name in ("qa.jsonl", "edit.jsonl"):
        for line in (bench / name).read_text(encoding="utf-8").splitlines():
            inst = json.loads(line)
            out[inst["id"]] = inst
    return out


@pytest.fixture(scope="session")
def sidecars(bench, instances) -> dict:
    return {
        iid: json.loads((bench / "maps" / f"{iid}.json").read_text(encoding="utf-8")) for iid in instances
    }
