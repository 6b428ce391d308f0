"""Helpers for the runner tests: synthetic benchmarks and real local HTTP servers."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest
from fakeserver import FaultServer

from scoring.runner.config import ModelSpec

FAKE_KEY = "sk-test-FAKEKEY-0123456789abcdef"


def tiny_png(seed: int = 0) -> bytes:
    """A valid 2x2 RGB PNG (content varies with seed)."""
    raw = b"".join(b"\x00" + bytes([(seed + i) % 256, 0, 0] * 2) for i in range(2))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
        )

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def scene(i: int = 0) -> dict:
    return {
        "type": "FeatureCollection",
        "crs": {"type": "name", "properties": {"name": "EPSG:3067"}},
        "features": [
            {
                "type": "Feature",
                "id": "F0",
                "properties": {"name": f"a{i}"},
                "geometry": {"type": "Point", "coordinates": [385000.0 + i, 6672000.0]},
            },
            {
                "type": "Feature",
                "id": "F1",
                "properties": {"name": "b"},
                "geometry": {
                    "type": "Polygon",
                    "coordinates": [
                        [[385010, 6672010], [385050, 6672010], [385050, 6672050], [385010, 6672010]]
                    ],
                },
            },
        ],
    }


def qa_instance(i: int, answer_type: str = "distance") -> dict:
    return {
        "id": f"helsinki-qa-{i:04d}",
        "city": "helsinki",
        "task": "qa",
        "relation": "T04",
        "family": "metric",
        "scene": scene(i),
        "question": f"How far is F0 from F1? ({i})",
        "answer_type": answer_type,
        "choices": ["12.5", "40", "85", "cannot be determined"],
        "correct_choice": "B",
        "answerable": {"geojson": True, "image": False, "together": True},
    }


def edit_instance(i: int) -> dict:
    return {
        "id": f"helsinki-edit-{i:04d}",
        "city": "helsinki",
        "task": "edit",
        "relation": "E01",
        "family": "move",
        "scene": scene(i),
        "target": "F0",
        "instruction": f"Move F0 so that it lies 30 m north of F1 ({i}).",
        "constraints": [{"type": "north_of", "ref": "F1", "distance_m": 30}],
        "allowed_operations": ["translate"],
    }


def make_bench(root: Path, n_qa: int = 3, n_edit: int = 2, maps: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps({"name": "synthetic", "version": 1}))
    with open(root / "qa.jsonl", "w") as fh:
        for i in range(n_qa):
            fh.write(json.dumps(qa_instance(i)) + "\n")
    with open(root / "edit.jsonl", "w") as fh:
        for i in range(n_edit):
            fh.write(json.dumps(edit_instance(i)) + "\n")
    if maps:
        (root / "maps").mkdir(exist_ok=True)
        for i in range(n_qa):
            (root / "maps" / f"helsinki-qa-{i:04d}.png").write_bytes(tiny_png(i))
        for i in range(n_edit):
            (root / "maps" / f"helsinki-edit-{i:04d}.png").write_bytes(tiny_png(100 + i))
    return root


def fast_spec(url: str, **kw) -> ModelSpec:
    params = dict(timeout_s=1.0, max_retries=3, backoff_base_s=0.01, backoff_max_s=0.05, concurrency=4)
    params.update(kw)
    return ModelSpec.from_endpoint(url, "fake-model", **params)


@pytest.fixture
def server():
    srv = FaultServer(hang_s=2.0).start()
    yield srv
    srv.stop()


@pytest.fixture
def bench(tmp_path):
    return make_bench(tmp_path / "bench")
