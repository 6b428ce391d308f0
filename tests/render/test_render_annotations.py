"""Labels, attribute cards, insets, attribution."""

import pytest
import shapely
from shapely.geometry import box, shape

from scoring.geometry.georef import PixelTransform

N = 1536


def _px_geoms(inst, rec):
    pt = PixelTransform.from_sidecar(rec)
    return {f["id"]: pt.geometry_task_to_pixel(shape(f["geometry"])) for f in inst["scene"]["features"]}


def _check_label(fid, bb, g, bounds=(0, 0, N, N)):
    x0, y0, x1, y1 = bb
    assert bounds[0] <= x0 < x1 <= bounds[2] and bounds[1] <= y0 < y1 <= bounds[3], (fid, bb)
    b = box(*bb)
    if g.geom_type in ("Point", "MultiPoint"):
        assert b.distance(g) >= 6, (fid, "label covers its point")
    elif g.geom_type in ("LineString", "MultiLineString"):
        assert not b.intersects(g), (fid, "label covers its line")
    else:
        assert b.intersection(g).area <= 0.10 * g.area, (fid, "label covers its polygon")
        assert not b.intersects(g.boundary), (fid, "label covers its polygon's outline")


def test_every_feature_is_labelled_inside_the_image_without_hiding_it(sidecars, instances):
    for iid, inst in instances.items():
        rec = sidecars[iid]
        geoms = _px_geoms(inst, rec)
        assert set(rec["labels"]) == set(geoms), iid
        for fid, lab in rec["labels"].items():
            assert lab["text"] == fid
            _check_label(fid, lab["bbox"], geoms[fid])
            # no label hides ANOTHER task feature's point or line either
            for other, g in geoms.items():
                if other != fid and g.geom_type != "Polygon":
                    assert not box(*lab["bbox"]).intersects(g), (iid, fid, other)
            if lab["displaced"]:
                (ax, ay), (bx, by) = lab["leader"]
                assert box(*lab["bbox"]).distance(shapely.Point(bx, by)) < 1e-6
        labels = list(rec["labels"].values())
        for i, a in enumerate(labels):
            for b in labels[i + 1 :]:
                assert not box(*a["bbox"]).intersects(box(*b["bbox"])), (iid, "labels overlap")


def test_labels_avoid_furniture(sidecars):
    for iid, rec in sidecars.items():
        furniture = (
            [
                rec["legend"]["bbox"],
                rec["north_arrow"]["bbox"],
                rec["scalebar"]["bbox"],
                rec["attribution"]["bbox"],
            ]
            + [c["bbox"] for c in rec["attribute_cards"]]
            + [i["bbox"] for i in rec["insets"]]
        )
        for fid, lab in rec["labels"].items():
            for fb in furniture:
                assert not box(*lab["bbox"]).intersects(box(*fb)), (iid, fid, fb)


def test_attribute_cards_exactly_when_attributes_are_shown(sidecars, instances):
    seen_cards = seen_none = 0
    for iid, inst in instances.items():
        info = inst["information"]
        rec = sidecars[iid]
        texts = " | ".join(t["text"] for t in rec["texts"])
        if info["attributes"]:
            seen_cards += 1
            assert rec["attribute_cards"], iid
            cards = {c["feature"]: c["text"] for c in rec["attribute_cards"]}
            for f in inst["scene"]["features"]:
                p = f["properties"]
                if any(a in p for a in info["attributes"]):
                    for a in info["attributes"]:
                        assert f"{a} " in cards[f["id"]]
            assert any(t["role"] == "attribute_card" for t in rec["texts"])
        else:
            seen_none += 1
            assert rec["attribute_cards"] == [], iid
            assert not any(t["role"] == "attribute_card" for t in rec["texts"]), iid
        for a in info["withheld"]:
            assert a not in texts, (iid, a)
    assert seen_cards and seen_none


def test_withheld_attributes_are_not_shown_even_if_present_in_properties(sidecars, instances):
    iid = "helsinki-qa-O06-003"
    props = instances[iid]["scene"]["features"][0]["properties"]
    assert props["bridge"] == "yes" and "bridge" in instances[iid]["information"]["withheld"]
    rec = sidecars[iid]
    assert rec["attribute_cards"] == []
    assert all("bridge" not in t["text"] and "layer" not in t["text"] for t in rec["texts"])


def test_shown_and_withheld_variants_differ_only_by_the_cards(bench):
    """Same scene, attributes shown vs withheld: the pixels may differ only inside card boxes."""
    import json

    import numpy as np
    from PIL import Image

    a = np.asarray(Image.open(bench / "maps" / "helsinki-qa-O06-002.png").convert("RGB"))
    b = np.asarray(Image.open(bench / "maps" / "helsinki-qa-O06-003.png").convert("RGB"))
    rec = json.loads((bench / "maps" / "helsinki-qa-O06-002.json").read_text())
    diff = np.any(a != b, axis=2)
    assert diff.any()
    mask = np.zeros_like(diff)
    for c in rec["attribute_cards"]:
        x0, y0, x1, y1 = c["bbox"]
        mask[int(y0) - 2 : int(y1) + 3, int(x0) - 2 : int(x1) + 3] = True
    assert not (diff & ~mask).any()


def test_tiny_feature_gets_an_inset(sidecars, instances):
    rec = sidecars["helsinki-qa-M12-004"]
    assert len(rec["insets"]) == 1
    ins = rec["insets"][0]
    assert ins["features"] == ["F0"] and rec["features"]["F0"]["in_inset"] == ins["id"]
    assert ins["magnification"] >= 2
    x0, y0, x1, y1 = ins["bbox"]
    assert 0 <= x0 < x1 <= N and 0 <= y0 < y1 <= N
    geoms = _px_geoms(instances["helsinki-qa-M12-004"], rec)
    for g in geoms.values():
        assert not box(*ins["bbox"]).intersects(g)
    # the inset has its own transform: F0 is large and labelled inside it
    ipt = PixelTransform.from_sidecar(rec, inset=ins["id"])
    f0 = ipt.geometry_task_to_pixel(
        shape(instances["helsinki-qa-M12-004"]["scene"]["features"][0]["geometry"])
    )
    fb = f0.bounds
    assert fb[2] - fb[0] >= 40 and box(*ins["bbox"]).contains(f0)
    _check_label("F0", ins["labels"]["F0"]["bbox"], f0, ins["bbox"])
    # features big enough get no inset
    for iid in ("helsinki-qa-T04-001", "helsinki-qa-O06-002"):
        assert sidecars[iid]["insets"] == []


def test_attribution_north_arrow_and_scalebar_are_drawn(sidecars):
    for rec in sidecars.values():
        att = [t for t in rec["texts"] if t["role"] == "attribution"]
        assert [t["text"] for t in att] == ["© OpenStreetMap contributors"]
        x0, y0, x1, y1 = rec["attribution"]["text_bbox"]
        assert 0 <= x0 < x1 <= N and 0 <= y0 < y1 <= N
        assert any(t["role"] == "north_arrow" and t["text"] == "N" for t in rec["texts"])
        sb = rec["scalebar"]
        # the bar length in pixels times the ground pixel size is the labelled length
        assert sb["length_px"] * rec["view"]["ground_pixel_size_m"] == pytest.approx(sb["length_m"], rel=1e-3)
        assert 60 <= sb["length_px"] <= 300


def test_tiny_scene_keeps_a_minimum_ground_width(sidecars):
    rec = sidecars["helsinki-qa-D02-006"]
    assert rec["view"]["ground_width_m"] == pytest.approx(160.0, rel=1e-3)
    assert sidecars["helsinki-qa-T04-001"]["view"]["ground_width_m"] > 240 * 1.29
