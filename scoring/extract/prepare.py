"""The kept records of one chunk projected, snapped and cleaned (issue 33 item 3).

The city CRS is known only once every record is read (the UTM zone of all records' bounds), yet
projecting and cleaning is most of what follows the read. So each chunk is prepared as soon as it
is read, on the build's executor, in the zone of the records read so far (a guess: the points come
first and span the city, so the heavy lines and polygons after them are nearly always guessed
right); a chunk prepared in another zone than the final one is prepared again. Every operation is
the one the one-pass assembler made, geometry by geometry (PROJ, set_precision and the validity
checks work one geometry at a time), so the pools are the same to the last bit whichever chunks
were guessed right, and whether they ran here or on a worker. Geometries travel as WKB (the same
doubles both ways).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely
import shapely.errors
from pyproj import Transformer

from scoring.extract.pools import PoolFeature
from scoring.extract.water import clean_area

# (EPSG code, the kept records' WGS 84 WKB, each record's role names, speculative?)
Job = tuple[int, list[bytes], list[tuple[str, ...]], bool]
CLEANED = ("road", "building", "area")
PARALLEL_MIN = 50_000  # geometries to prepare again below which shipping them to workers costs more
_TRANSFORMERS: dict[int, Transformer] = {}


def prepare_chunk(job: Job, _shared: Any = None) -> dict | None:
    """One chunk's kept records in the task CRS: per role, (position in the chunk, result as WKB).
    None when a speculative job failed (it is prepared again, in the final CRS, where a failure
    raises as it would have in one pass)."""
    epsg, wkbs, roles, speculative = job
    try:
        return _prepare(epsg, wkbs, roles)
    except (shapely.errors.GEOSException, ValueError):
        if speculative:
            return None
        raise


def _prepare(epsg: int, wkbs: list[bytes], roles: list[tuple[str, ...]]) -> dict:
    from scoring.extract.assemble import _CLEAN, _project_all, snap_all

    to_task = _TRANSFORMERS.get(epsg)
    if to_task is None:
        to_task = _TRANSFORMERS[epsg] = Transformer.from_crs(4326, epsg, always_xy=True)
    projected = _project_all(list(shapely.from_wkb(wkbs)), to_task)
    present = [g for g in projected if g is not None]
    at: dict[str, list[int]] = {}
    for i, (g, names) in enumerate(zip(projected, roles, strict=True)):
        if g is not None:
            for r in names:
                at.setdefault(r, []).append(i)
    out: dict[str, Any] = {
        "epsg": epsg,
        "missing": [i for i, g in enumerate(projected) if g is None],
        "present": len(present),
        "bounds": tuple(shapely.total_bounds(present).tolist()) if present else None,
    }
    pois = at.get("poi", [])
    out["poi"] = list(zip(pois, _wkb(snap_all([projected[i] for i in pois])), strict=True))
    for kind in CLEANED:
        idx = at.get(kind, [])
        cleaned = _CLEAN[kind]([projected[i] for i in idx])
        geoms = _wkb([g for g, _, _ in cleaned])
        out[kind] = [(i, w, r, d) for i, w, (_, r, d) in zip(idx, geoms, cleaned, strict=True)]
    out["water"] = [(i, *_water(projected[i])) for i in at.get("water", [])]
    for kind in ("coast_line", "coast_ring"):
        idx = at.get(kind, [])
        out[kind] = list(zip(idx, _wkb([projected[i] for i in idx]), strict=True))
    return out


def _water(geom) -> tuple[bytes | None, str | None]:
    """(the cleaned water polygon as WKB or None, the reason GEOS refused it or None)."""
    try:
        g = clean_area(geom)
    except (shapely.errors.GEOSException, ValueError) as exc:
        return None, str(exc).split(": ", 1)[-1].strip() or type(exc).__name__
    return (None if g is None else shapely.to_wkb(g)), None


def _wkb(geoms: list) -> list[bytes | None]:
    """WKB of each geometry, None kept as None (one array call)."""
    arr = np.empty(len(geoms), dtype=object)
    arr[:] = geoms
    return list(shapely.to_wkb(arr)) if len(arr) else []


def collect(asm: Any, c: int, part: dict | None) -> dict | None:
    """Chunk c's prepared records as what the pools are made of: its pool features by kind, its
    water (uid, props, geometry or None, why GEOS refused it), coastlines, the assembler's events
    (record, kind) and the spread check's count and bounds. Made as each chunk comes back (the
    builder's process waits for the reading then), kept if the zone guessed was the city's."""
    if part is None:
        return None
    lo, _ = asm.chunks[c]
    index, named = asm.index, asm._named
    out: dict[str, Any] = {k: part[k] for k in ("epsg", "present", "bounds")}
    events = [(index[lo + i], 1) for i in part["missing"]]  # broken by the projection
    pois = part["poi"]
    out["poi"] = [
        PoolFeature(*_kinded(named(lo + i, "poi"), "poi", g))
        for (i, _), g in zip(pois, _from_wkb([w for _, w in pois]), strict=True)
    ]
    for kind in CLEANED:
        group, feats = part[kind], []
        for (i, w, repaired, dropped), g in zip(group, _from_wkb([w for _, w, _, _ in group]), strict=True):
            if repaired:
                events.append((index[lo + i], 0))
            if dropped:
                events.append((index[lo + i], 1))
            if w is not None:
                feats.append(PoolFeature(*_kinded(named(lo + i, kind), kind, g)))
        out[kind] = feats
    water = part["water"]
    geoms = _from_wkb([w for _, w, _ in water])
    out["water"] = [(*named(lo + i, "water"), g, why) for (i, _, why), g in zip(water, geoms, strict=True)]
    for kind in ("coast_line", "coast_ring"):
        out[kind] = _from_wkb([w for _, w in part[kind]])
    out["events"] = events
    return out


def prepared_chunks(asm: Any, epsg: int, prepared: list | None, executor: Any) -> list[dict]:
    """Every chunk of `asm` prepared and collected in the city's zone `epsg`: the speculative ones
    that guessed it, the others prepared now (on the executor's workers when there are many)."""
    done: list = list(prepared) if prepared is not None else [None] * len(asm.chunks)
    redo = [c for c, part in enumerate(done) if part is None or part["epsg"] != epsg]
    jobs = [asm._job(c, epsg, False) for c in redo]
    if executor is None or executor.workers < 2 or sum(len(j[1]) for j in jobs) < PARALLEL_MIN:
        parts = [prepare_chunk(j) for j in jobs]
    else:
        parts = list(executor.map(prepare_chunk, jobs, desc="extract", unit="chunk", start_method="fork"))
    for c, part in zip(redo, parts, strict=True):
        done[c] = collect(asm, c, part)
    return done


def _kinded(named: tuple[Any, Any], kind: str, geom) -> tuple:
    """PoolFeature's fields (uid, kind, geometry, props) from a record's (uid, props)."""
    return named[0], kind, geom, named[1]


def _from_wkb(wkbs: list) -> list:
    """Each WKB parsed (None stays None), in one array call."""
    arr = np.empty(len(wkbs), dtype=object)
    arr[:] = wkbs
    return list(shapely.from_wkb(arr)) if len(arr) else []
