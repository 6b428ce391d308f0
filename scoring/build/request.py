"""What a build was asked, and whether a benchmark directory holds that request's build.

Light on purpose (the standard library, the manifest reader): `spatialgap build` checks its --out
before it starts reading the extract, and a build of the same request resumes (draws the maps
still missing) instead of refusing a directory that is not empty.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scoring import __version__
from scoring.errors import SpatialGapError
from scoring.support.files import sha256_file


def build_request(options: dict[str, Any], mapping: str | None) -> dict:
    """The build's options as given (city, seed, counts, relations, pool split, protocol,
    unanswerable share) and its mapping file's bytes; beside the source's bytes (the manifest's
    source.sha256) they decide whether a build in --out is this one's."""
    relations = options.get("relations")
    return {
        **options,
        "relations": sorted(relations) if relations else None,
        "mapping_sha256": sha256_file(mapping) if mapping else None,
    }


def built_here(out: Path, source: Path, request: dict) -> dict | None:
    """The manifest of the benchmark in ``out`` when this tool version built it from ``request``
    on ``source``'s bytes, else None (no benchmark there, another request, an unreadable one).
    A build writes its directory in one rename, so a manifest there means every file is too."""
    if not (out / "manifest.json").is_file():
        return None
    from scoring.formats.benchmark import load_manifest  # only here: the command starts light

    try:
        manifest, _ = load_manifest(out)
        same = (
            manifest.get("request") == request
            and manifest.get("tool_version") == __version__
            and manifest["source"]["sha256"] == sha256_file(source)
        )
    except (OSError, KeyError, TypeError, SpatialGapError):
        return None
    return manifest if same else None
