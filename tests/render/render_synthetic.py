"""A small synthetic benchmark directory (Helsinki-like street grid in EPSG:32635) for render tests."""

from __future__ import annotations

import json
import random
from pathlib import Path

EPSG = 32635
X0, Y0 = 385000.0, 6672000.0  # central Helsinki in UTM 35N
GRID = 80.0
CRS = {"type": "name", "properties": {"name": f"urn:ogc:def:crs:EPSG::{EPSG}"}}


def _rect(x, y, w, h):
    return [[[x, y], [x + w, y], [x + w, y + h], [x, y + h], [x, y]]]


def make_context(seed: int = 42) -> list[dict]:
    rnd = random.Random(seed)
    feats = []
    oid = 1000
    n = 8  # 8 blocks each way from the centre -> 1280 m x 1280 m
    xs = [X0 + (i - n) * GRID for i in range(2 * n + 1)]
    ys = [Y0 + (j - n) * GRID for j in range(2 * n + 1)]
    for i, x in enumerate(xs):
        for j in range(len(ys) - 1):
            oid += 1
            hw = "secondary" if i % 4 == 0 else "residential"
            feats.append(
                {
                    "type": "Feature",
                    "geometry": {"type": "LineString", "coordinates": [[x, ys[j]], [x, ys[j + 1]]]},
                    "properties": {
                        "pool": "road",
                        "osm_id": oid,
                        "highway": hw,
                        "layer": 0,
                        "bridge": "no",
                        "tunnel": "no",
                        "name": f"Katu {i}",
                    },
                }
            )
    for j, y in enumerate(ys):
        for i in range(len(xs) - 1):
            oid += 1
            hw = "primary" if j == n else ("tertiary" if j % 4 == 0 else "residential")
            feats.append(
                {
                    "type": "Feature",
                    "geometry": {"type": "LineString", "coordinates": [[xs[i], y], [xs[i + 1], y]]},
                    "properties": {
                        "pool": "road",
                        "osm_id": oid,
                        "highway": hw,
                        "layer": 0,
                        "bridge": "no",
                        "tunnel": "no",
                        "name": f"Tie {j}",
                    },
                }
            )
    for i in range(len(xs) - 1):
        for j in range(len(ys) - 1):
            bx, by = xs[i], ys[j]
            if (i * 7 + j * 3) % 11 == 0:
                oid += 1
                feats.append(
                    {
                        "type": "Feature",
                        "geometry": {"type": "Polygon", "coordinates": _rect(bx + 8, by + 8, 64, 64)},
                        "properties": {"pool": "area", "osm_id": oid, "landuse": "park"},
                    }
                )
                # a footpath across the park
                oid += 1
                feats.append(
                    {
                        "type": "Feature",
                        "geometry": {
                            "type": "LineString",
                            "coordinates": [[bx + 8, by + 8], [bx + 40, by + 44], [bx + 72, by + 72]],
                        },
                        "properties": {
                            "pool": "road",
                            "osm_id": oid,
                            "highway": "footway",
                            "layer": 0,
                            "bridge": "no",
                            "tunnel": "no",
                            "name": "",
                        },
                    }
                )
                continue
            for k in range(rnd.randint(2, 4)):
                w, h = rnd.uniform(12, 30), rnd.uniform(10, 26)
                qx, qy = (k % 2) * 34, (k // 2) * 34
                oid += 1
                feats.append(
                    {
                        "type": "Feature",
                        "geometry": {
                            "type": "Polygon",
                            "coordinates": _rect(
                                bx + 9 + qx + rnd.uniform(0, 3), by + 9 + qy + rnd.uniform(0, 3), w, h
                            ),
                        },
                        "properties": {"pool": "building", "osm_id": oid, "building": "yes"},
                    }
                )
    for _ in range(160):
        oid += 1
        feats.append(
            {
                "type": "Feature",
                "geometry": {
                    "type": "Point",
                    "coordinates": [X0 + rnd.uniform(-600, 600), Y0 + rnd.uniform(-600, 600)],
                },
                "properties": {"pool": "poi", "osm_id": oid, "amenity": "cafe"},
            }
        )
    return feats


def _feat(fid, kind, geom, **props):
    return {"type": "Feature", "id": fid, "geometry": geom, "properties": {"id": fid, "kind": kind, **props}}


def _line(*pts):
    return {"type": "LineString", "coordinates": [list(p) for p in pts]}


def _poly(x, y, w, h):
    return {"type": "Polygon", "coordinates": _rect(x, y, w, h)}


def _pt(x, y):
    return {"type": "Point", "coordinates": [x, y]}


def _inst(iid, task, relation, family, feats, attributes=(), withheld=(), **extra):
    inst = {
        "id": iid,
        "city": "helsinki",
        "task": task,
        "relation": relation,
        "family": family,
        "scene": {"type": "FeatureCollection", "crs": CRS, "features": feats},
        "information": {"attributes": list(attributes), "withheld": list(withheld)},
    }
    if task == "qa":
        inst.update(question="Does F0 touch F1?", choices=["yes", "no"])
    inst.update(extra)
    return inst


def make_instances() -> list[dict]:
    x, y = X0, Y0
    crossing = [
        _feat(
            "F0",
            "road",
            _line((x - 150, y + 20), (x - 40, y + 25), (x + 90, y + 30)),
            layer=1,
            bridge="yes",
            tunnel="no",
        ),
        _feat(
            "F1",
            "road",
            _line((x - 40, y - 110), (x - 35, y + 30), (x - 30, y + 150)),
            layer=0,
            bridge="no",
            tunnel="no",
        ),
    ]
    qa = [
        _inst(
            "helsinki-qa-T04-001",
            "qa",
            "T04",
            "topology",
            [
                _feat("F0", "road", _line((x, y - 120), (x, y), (x, y + 120))),
                _feat("F1", "building", _poly(x + 3, y + 10, 28, 22)),
                _feat("F2", "building", _poly(x - 70, y - 60, 30, 40)),
            ],
        ),
        _inst(
            "helsinki-qa-O06-002", "qa", "O06", "ordering", crossing, attributes=["layer", "bridge", "tunnel"]
        ),
        _inst(
            "helsinki-qa-O06-003",
            "qa",
            "O06",
            "ordering",
            json.loads(json.dumps(crossing)),
            withheld=["layer", "bridge", "tunnel"],
        ),
        _inst(
            "helsinki-qa-M12-004",
            "qa",
            "M12",
            "metric",
            [
                _feat("F0", "building", _poly(x + 200, y + 150, 4, 3)),
                _feat("F1", "poi", _pt(x - 180, y - 160)),
                _feat("F2", "area", _poly(x - 60, y - 40, 120, 90)),
            ],
            question="How far is F0 from F1?",
            choices=["< 200 m", "200-500 m", "> 500 m"],
        ),
        _inst(
            "helsinki-qa-D02-006",
            "qa",
            "D02",
            "direction",
            [
                _feat("F0", "poi", _pt(x + 12, y + 14)),
                _feat("F1", "poi", _pt(x + 16, y + 18)),
            ],
            question="Is F0 south-west of F1?",
            choices=["yes", "no"],
        ),
        _inst(
            "helsinki-qa-T04-007",
            "qa",
            "T04",
            "topology",
            [
                _feat("F0", "building", _poly(x + 9, y + 9, 20, 16)),
                _feat("F1", "building", _poly(x + 31, y + 9, 14, 16)),
                _feat("F2", "building", _poly(x + 9, y + 27, 18, 20)),
                _feat("F3", "building", _poly(x + 30, y + 28, 22, 18)),
                _feat("F4", "road", _line((x, y - 40), (x, y + 120))),
                _feat("F5", "road", _line((x - 40, y), (x + 120, y))),
                _feat("F6", "poi", _pt(x + 50, y + 55)),
                _feat("F7", "area", _poly(x + 82, y + 8, 60, 60)),
            ],
        ),
    ]
    edit = [
        _inst(
            "helsinki-edit-D02-005",
            "edit",
            "D02",
            "direction",
            [
                _feat("F0", "poi", _pt(x + 30, y - 20)),
                _feat("F1", "building", _poly(x - 60, y + 20, 40, 30)),
                _feat("F2", "building", _poly(x + 60, y + 40, 30, 30)),
            ],
            target="F0",
            instruction="Move F0 so that it lies north of F1.",
            constraints=["F0 stays outside every building"],
            reference_edit={"type": "Point", "coordinates": [x - 40, y + 90]},
        ),
    ]
    return qa + edit


def make_bench(path: Path, instances: list[dict] | None = None, context: list[dict] | None = None) -> Path:
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    instances = make_instances() if instances is None else instances
    context = make_context() if context is None else context
    manifest = {"city": "helsinki", "crs": {"epsg": EPSG, "name": "WGS 84 / UTM zone 35N"}, "version": "test"}
    (path / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    with (path / "qa.jsonl").open("w", encoding="utf-8") as fh:
        for i in instances:
            if i["task"] == "qa":
                fh.write(json.dumps(i) + "\n")
    with (path / "edit.jsonl").open("w", encoding="utf-8") as fh:
        for i in instances:
            if i["task"] == "edit":
                fh.write(json.dumps(i) + "\n")
    with (path / "context.geojsonl").open("w", encoding="utf-8") as fh:
        for f in context:
            fh.write(json.dumps(f) + "\n")
    return path
