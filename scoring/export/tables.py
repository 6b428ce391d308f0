"""The export's files: Parquet with one fixed Arrow schema (scoring.formats.exported.COLUMNS),
optionally carrying Hugging Face ``datasets`` features, and JSON Lines of the same rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scoring.formats.exported import COLUMNS
from scoring.support.files import write_atomic

ROW_GROUP = 64  # rows per Parquet row group: a group of 1536² maps stays ~30-60 MB in memory


def arrow_schema(*, hf_features: bool) -> Any:
    """The export's Arrow schema; with ``hf_features`` its metadata declares the ``datasets``
    features (the map an Image, the lists Lists), which `datasets` reads from the file."""
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "double": pa.float64(),
        "list<string>": pa.list_(pa.string()),
        "image": pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
    }
    schema = pa.schema([pa.field(name, types[kind]) for name, (kind, _) in COLUMNS.items()])
    if hf_features:
        schema = schema.with_metadata({"huggingface": json.dumps({"info": {"features": hf_feature_dict()}})})
    return schema


def hf_feature_dict() -> dict[str, Any]:
    """``datasets.Features.to_dict()`` of the schema (datasets >= 4 spells sequences List)."""
    value = {"string": "string", "double": "float64"}
    out: dict[str, Any] = {}
    for name, (kind, _) in COLUMNS.items():
        if kind == "image":
            out[name] = {"_type": "Image"}
        elif kind == "list<string>":
            out[name] = {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"}
        else:
            out[name] = {"dtype": value[kind], "_type": "Value"}
    return out


def write_parquet_rows(path: Path, rows: list[dict[str, Any]], *, hf_features: bool) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(rows, schema=arrow_schema(hf_features=hf_features))
    tmp = path.with_name(f".{path.name}.tmp")
    # PNGs are deflated already: compressing the map column again would only cost time
    pq.write_table(
        table,
        tmp,
        row_group_size=ROW_GROUP,
        compression={name: ("none" if name == "map" else "zstd") for name in COLUMNS},
    )
    tmp.replace(path)


def write_jsonl_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in rows)
    write_atomic(path, text)
