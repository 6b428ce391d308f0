"""Regenerate the frozen selfcheck fixture (resources/selfcheck/) from a rendered Helsinki
benchmark built with the default seed:

    .venv/bin/python -m tests.score.make_selfcheck_fixture --bench out/helsinki

Every case states the verdict it was WRITTEN to get (by construction: the reference answer,
an answer just inside / outside the tolerance, a refusal, an edit breaking a constraint, ...).
The script refuses to write the fixture when the current scorer disagrees with any intended
verdict, so the fixture records intentions checked once by a human, not whatever the code says.
Figures (accuracy, intervals, rates) are then recorded as the scorer computes them.
Only regenerate deliberately, after explaining the drift `spatialgap selfcheck` reported.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from scoring.geometry.georef import PixelTransform
from scoring.score.selfcheck import FIXTURE_DIR, fixture_figures, score_fixture
from tests.score.edit_helpers import pixel_edit_for_reference


def first(insts, relation, pred=lambda i: True):
    return next(i for i in insts if i["relation"] == relation and pred(i))


def build_cases(bench: Path) -> tuple[list[dict], list[dict]]:
    qa = [json.loads(x) for x in (bench / "qa.jsonl").read_text().splitlines()]
    ed = [json.loads(x) for x in (bench / "edit.jsonl").read_text().splitlines()]
    used: dict[str, dict] = {}
    cases: list[dict] = []

    def add(inst, label, text, verdict, form="open", modality="geojson", status="ok", error=None, **expect):
        used[inst["id"]] = inst
        task = inst["task"]
        form = "edit" if task == "edit" else form
        cases.append(
            {
                "sample": f"{inst['id']}|{form}|{modality}|{label}",
                "instance_id": inst["id"],
                "label": label,
                "task": task,
                "form": form,
                "modality": modality,
                "status": status,
                "text": text,
                "error": error,
                "expect": {"verdict": verdict, **expect},
            }
        )

    # ---- open-ended QA, per answer type
    m01 = first(qa, "M01")
    a = m01["answer"]
    add(m01, "exact", f"The closest points are on the east edge.\nAnswer: {a:.2f}", "correct")
    add(
        m01,
        "inside-tolerance",
        f"**Answer:** {a + 0.9:.3f} m",
        "correct",
        quality=round(abs(round(a + 0.9, 3) - a), 6),
    )
    add(
        m01,
        "outside-tolerance",
        f"Answer: {a + 1.5:.3f}",
        "wrong",
        quality=round(abs(round(a + 1.5, 3) - a), 6),
    )
    add(m01, "kilometres", f"It is approximately {a / 1000:.5f} km.", "correct")
    add(m01, "ambiguous", "It could be 10 m, or maybe 20 m.", "unparsed")
    add(m01, "refusal-on-answerable", "Answer: cannot be determined", "wrong")
    add(m01, "http-error", None, "error", status="error", error={"kind": "http", "message": "HTTP 503"})
    add(m01, "mcq-bold", f"**{m01['correct_choice']}**", "correct", form="mcq")
    wrong_letter = next(x for x in "ABCD" if x != m01["correct_choice"])
    add(
        m01,
        "mcq-wrong",
        f"<think>Perhaps {m01['correct_choice']}?</think>\nFinal answer: ({wrong_letter})",
        "wrong",
        form="mcq",
    )
    add(
        m01,
        "mcq-two-letters",
        f"Either ({m01['correct_choice']}) or ({wrong_letter}).",
        "unparsed",
        form="mcq",
    )
    add(m01, "image-exact", f"Answer: {a:.1f}", "correct", modality="image")
    add(m01, "together-wrong", f"Answer: {a * 2 + 10:.1f}", "wrong", modality="together")

    d04 = first(qa, "D04")
    add(d04, "circular", f"Answer: {(d04['answer'] + 0.7) % 360:.2f}°", "correct")
    add(d04, "opposite", f"Answer: {(d04['answer'] + 180) % 360:.1f}", "wrong")
    d02 = first(qa, "D02")
    words = {
        "N": "north",
        "NE": "north-east",
        "E": "east",
        "SE": "south-east",
        "S": "south",
        "SW": "south-west",
        "W": "west",
        "NW": "north-west",
    }
    add(d02, "word", f"F1 lies to the {words[d02['answer']]} of F0.", "correct")
    add(d02, "wrong-abbr", f"Answer: {next(c for c in d02['choices'] if c != d02['answer'])}", "wrong")
    add(first(qa, "D05"), "relative", f"Answer: {first(qa, 'D05')['answer']}", "correct")
    add(first(qa, "D06"), "axis", f"Answer: {first(qa, 'D06')['answer']}", "correct")
    m12 = first(qa, "M12")
    add(m12, "perimeter-wrong", f"Answer: {m12['answer'] * 1.1:.1f}", "wrong")
    m14 = first(qa, "M14")
    add(m14, "count", f"Counting them: {m14['answer']} features.\nAnswer: {m14['answer']}", "correct")
    m18 = first(qa, "M18")
    add(m18, "density-separators", f"Answer: {m18['answer']:,.4f} per km²", "correct")
    o01 = first(qa, "O01")
    add(o01, "ordering", "Answer: " + " → ".join(o01["answer"]), "correct")
    add(o01, "ordering-reversed", "Answer: " + ", ".join(reversed(o01["answer"])), "wrong")
    t04 = first(qa, "T04")
    add(t04, "feature-id", f"<think>F1 overlaps, F2 not.</think>\nAnswer: {t04['answer']}", "correct")
    add(t04, "unknown-id", "Answer: F42", "unparsed")

    # ---- unanswerable by design
    o06 = first(qa, "O06", lambda i: not i["answerable"]["geojson"])
    ref_letter = "ABCD"[o06["choices"].index("cannot be determined")]
    add(o06, "refusal", "The layer attributes are not given, so it cannot be determined.", "correct_refusal")
    add(o06, "unfounded", "Answer: F0", "unfounded_answer")
    add(o06, "mcq-refusal", f"Answer: {ref_letter}", "correct_refusal", form="mcq")
    add(
        o06,
        "mcq-unfounded",
        f"Answer: {next(x for x in 'ABCD' if x != ref_letter)}",
        "unfounded_answer",
        form="mcq",
    )

    # ---- structured editing
    tr = (
        first(ed, "D01", lambda i: [o["op"] for o in i["reference_edit"]["operations"]] == ["translate"])
        if any(
            i["relation"] == "D01" and [o["op"] for o in i["reference_edit"]["operations"]] == ["translate"]
            for i in ed
        )
        else next(i for i in ed if [o["op"] for o in i["reference_edit"]["operations"]] == ["translate"])
    )
    ref = json.dumps(tr["reference_edit"])
    add(tr, "reference", f"```json\n{ref}\n```", "correct", quality=0.0)
    add(tr, "reference-together", ref, "correct", modality="together")
    op = tr["reference_edit"]["operations"][0]
    add(
        tr,
        "reversed",
        json.dumps({"operations": [{"op": "translate", "dx": -op["dx"], "dy": -op["dy"]}]}),
        "wrong",
    )
    add(tr, "no-change", '{"operations": [{"op": "translate", "dx": 0, "dy": 0}]}', "wrong")
    add(tr, "prose", "Move F0 about 20 m north-east.", "unparsed")
    add(
        tr,
        "null-island",
        '{"geometry": {"type": "Point", "coordinates": [0, 0]}}',
        "wrong",
        screen="null_island",
    )
    from shapely.geometry import shape

    c = shape(next(f for f in tr["scene"]["features"] if f["id"] == tr["target"])["geometry"]).centroid
    x, y = round(c.x, 2), round(c.y, 2)
    add(
        tr,
        "bowtie",
        json.dumps(
            {
                "geometry": {
                    "type": "Polygon",
                    "coordinates": [[[x, y], [x + 10, y + 10], [x + 10, y], [x, y + 10], [x, y]]],
                }
            }
        ),
        "wrong",
        screen="invalid",
    )
    add(tr, "timeout", None, "error", status="error", error={"kind": "timeout"})
    rot = next(i for i in ed if [o["op"] for o in i["reference_edit"]["operations"]] == ["rotate"])
    add(rot, "rotate-reference", json.dumps(rot["reference_edit"]), "correct")
    attr = next(i for i in ed if i["allowed_operations"] == ["set_attribute"])
    add(attr, "attribute-reference", json.dumps(attr["reference_edit"]), "correct")
    add(attr, "attribute-disallowed-move", '{"operations": [{"op": "translate", "dx": 5, "dy": 5}]}', "wrong")

    # ---- map-image editing (pixels)
    for inst in (tr, rot):
        pt = PixelTransform.from_sidecar(bench / "maps" / f"{inst['id']}.json")
        add(
            inst,
            "pixels-reference",
            json.dumps(pixel_edit_for_reference(inst, pt)),
            "correct",
            modality="image",
            raster_tolerant=True,
        )
    pt = PixelTransform.from_sidecar(bench / "maps" / f"{tr['id']}.json")
    px = pixel_edit_for_reference(tr, pt)
    near = pixel_edit_for_reference(tr, pt, extra_dx=3.0)
    add(tr, "pixels-3px-off", json.dumps(near), None, modality="image", raster_tolerant=True)
    back = {"operations": [{"op": "translate", "dx": -o["dx"], "dy": -o["dy"]} for o in px["operations"]]}
    add(tr, "pixels-reversed", json.dumps(back), "wrong", modality="image", raster_tolerant=False)
    pt_rot = PixelTransform.from_sidecar(bench / "maps" / f"{rot['id']}.json")
    add(
        rot,
        "pixels-rotation-flipped",
        json.dumps(pixel_edit_for_reference(rot, pt_rot, flip_rotation=True)),
        None,
        modality="image",
    )
    # touching within 0.05 m cannot survive 3 px (~0.6 m): strictly wrong, raster-tolerant
    t04e = first(ed, "T04")
    pt_t = PixelTransform.from_sidecar(bench / "maps" / f"{t04e['id']}.json")
    add(
        t04e,
        "pixels-3px-off-touching",
        json.dumps(pixel_edit_for_reference(t04e, pt_t, extra_dx=3.0)),
        "wrong",
        modality="image",
        raster_tolerant=True,
    )
    add(
        t04e,
        "pixels-80px-off-touching",
        json.dumps(pixel_edit_for_reference(t04e, pt_t, extra_dx=80.0)),
        "wrong",
        modality="image",
        raster_tolerant=False,
    )
    return cases, list(used.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, type=Path)
    ap.add_argument("--out", type=Path, default=FIXTURE_DIR)
    args = ap.parse_args(argv)
    cases, instances = build_cases(args.bench)
    tmp = args.out.with_name(args.out.name + ".new")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "maps").mkdir(parents=True)
    (tmp / "instances.jsonl").write_text(
        "".join(
            json.dumps(i, ensure_ascii=False, sort_keys=True) + "\n"
            for i in sorted(instances, key=lambda i: i["id"])
        )
    )
    for c in cases:
        if c["modality"] == "image" and c["task"] == "edit":
            shutil.copy(
                args.bench / "maps" / f"{c['instance_id']}.json", tmp / "maps" / f"{c['instance_id']}.json"
            )
    (tmp / "cases.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases))
    _, rows = score_fixture(tmp)
    bad = []
    for c, r in zip(cases, rows, strict=False):
        if c["expect"]["verdict"] is None:  # verdict left to the scorer (recorded below)
            c["expect"]["verdict"] = r["verdict"]
        for k, v in c["expect"].items():
            if k != "quality" and r.get(k) != v:
                bad.append(f"{c['sample']}: {k} {r.get(k)!r} != intended {v!r} ({r.get('reason')})")
        c["expect"]["reason"] = r["reason"]  # for readers; not compared
        if "quality" not in c["expect"] and r.get("quality") is not None:
            c["expect"]["quality"] = r["quality"]
    if bad:
        print("\n".join(bad), file=sys.stderr)
        shutil.rmtree(tmp)
        return 1
    (tmp / "cases.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases))
    (tmp / "expected_figures.json").write_text(json.dumps(fixture_figures(rows), indent=1) + "\n")
    readme = args.out / "README.md"
    if readme.exists():
        shutil.copy(readme, tmp / "README.md")
    shutil.rmtree(args.out, ignore_errors=True)
    tmp.rename(args.out)
    print(f"{len(cases)} cases over {len(instances)} instances -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
