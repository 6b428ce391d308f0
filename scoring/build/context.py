"""The city's context layer (`context.geojsonl`: water, then the task pools, for the maps).

Serialising it is linear in the pools (a tenth of a millisecond a feature, a minute for a pool of
half a million features), so it is cut into chunks that run on the build's executor beside the
shards instead of after them in the builder's own process; the chunks' lines, joined in order,
are the file `context_features` gives, byte for byte."""

from __future__ import annotations

import json
from collections.abc import Iterator

from scoring.extract.pools import FeaturePools, PoolFeature
from scoring.geometry.scene import _rounded

CONTEXT_CHUNK = 20_000  # features per job: large enough that shipping one costs little
POOL_ORDER = ("area", "building", "road", "poi")  # after the water

# (source, kind, lo, hi): features lo..hi of pools.context[kind] ("context") or pools.features[kind]
Segment = tuple[str, str, int, int]


def _dumps(obj) -> str:
    # the builder's canonical JSON (scoring.build.builder.dumps)
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _feature(f: PoolFeature, pool: str) -> dict:
    from shapely.geometry import mapping

    return {
        "type": "Feature",
        "id": f.uid,
        "properties": {"pool": pool, "osm_id": f.uid, **f.props},
        "geometry": _rounded(mapping(f.geom)),
    }


def context_features(pools: FeaturePools) -> Iterator[dict]:
    """The real OSM context of the city (for map rendering), in task coordinates: water first
    (the sea derived from the coastline, `sea/<k>`, then lakes, rivers and basins), then the
    task pools. A basin or reservoir that is also a task-pool area is written once, as water."""
    as_water = _water_uids(pools)
    for job in context_chunks(pools, chunk=1 << 62):
        for segment in job:
            yield from _segment_features(segment, pools, as_water)


def context_chunks(pools: FeaturePools, chunk: int = CONTEXT_CHUNK) -> list[tuple[Segment, ...]]:
    """The context's features in file order, as jobs of at most `chunk` features each."""
    sources = [("context", "water", len(_water(pools)))]
    sources += [("features", k, len(pools.features[k])) for k in POOL_ORDER]
    jobs: list[tuple[Segment, ...]] = []
    job: list[Segment] = []
    size = 0
    for source, kind, n in sources:
        lo = 0
        while lo < n:
            take = min(n - lo, chunk - size)
            job.append((source, kind, lo, lo + take))
            size, lo = size + take, lo + take
            if size == chunk:
                jobs.append(tuple(job))
                job, size = [], 0
    if job:
        jobs.append(tuple(job))
    return jobs


def context_lines(job: tuple[Segment, ...], pools: FeaturePools) -> str:
    """One chunk's lines of `context.geojsonl` (a worker's part)."""
    water = _water_uids(pools)
    return "".join(_dumps(f) + "\n" for segment in job for f in _segment_features(segment, pools, water))


def _water(pools: FeaturePools) -> list[PoolFeature]:
    return list(getattr(pools, "context", {}).get("water", []))


def _water_uids(pools: FeaturePools) -> set[str]:
    return {f.uid for f in _water(pools)}


def _segment_features(segment: Segment, pools: FeaturePools, as_water: set[str]) -> Iterator[dict]:
    source, kind, lo, hi = segment
    if source == "context":
        for f in _water(pools)[lo:hi]:
            yield _feature(f, "water")
        return
    for f in pools.features[kind][lo:hi]:
        if kind == "area" and f.uid in as_water:
            continue
        yield _feature(f, kind)
