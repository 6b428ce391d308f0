"""Real replies of real models (tests/answers/real/): the reader's reading against the published one.

The corpus holds replies that public evaluation repositories published beside the answer their own
extraction read from each reply (tests/answers/real/SOURCES.md). This module loads it, asks the
reader for each reply what a run of this tool would ask (the answer type, the options, the
question), and compares the reading with the published extraction -- or, where a careful grader
read the reply by hand (tests/answers/real/adjudicated.jsonl), with that grader's reading, which
overrides the published one. FRIEDA's published replies (../shared/data/frieda/, read at run time
only, never copied) are a second comparison for directions and distances.

    .venv/bin/python tests/answers/real_replies.py [--show N] [--source X] [--model M] [--kind K]
        [--raw] [--ungraded] [--classes] [--frieda] [--seed S]

prints the agreement table (raw: against the published extraction; adjudicated: the grader's
reading where there is one) and N disagreements with excerpts of their replies.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `scoring` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scoring.answers import Parsed, distance_unit_factor, is_refusal, parse_answer

REAL = Path(__file__).parent / "real"
ADJUDICATED = REAL / "adjudicated.jsonl"
FRIEDA = Path(__file__).resolve().parents[3] / "shared" / "data" / "frieda"
KINDS = ("choice", "integer", "float")
NO_ANSWER = ("refusal", "unreadable")  # a grader's readings that mean: the reply gives no answer

# A float read in metres still agrees when the reply wrote a unit and the published extraction kept
# the number as written ("5 cm" -> 0.05 m against "5"): the same number, only converted.
_UNIT_FACTORS = (1000.0, 0.01, 0.001, 1609.344, 0.3048, 0.9144, 0.0254, 1852.0)


# --- the corpus -----------------------------------------------------------------------------------
def load(sources: Iterable[str] | None = None) -> list[dict]:
    """Every record of the corpus (of ``sources`` only, when given), in file order."""
    wanted = set(sources) if sources else None
    records = []
    for path in sorted(REAL.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                if wanted is None or rec["source"] in wanted:
                    records.append(rec)
    return records


def load_adjudicated() -> dict[str, dict]:
    """The grader's readings by record id (the last entry wins when an id appears twice)."""
    if not ADJUDICATED.exists():
        return {}
    table = {}
    for line in ADJUDICATED.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            table[entry["id"]] = entry
    return table


def n_options(rec: dict) -> int:
    """How many options a choice record offers (4 when its options could not be separated)."""
    return len(rec["options"]) if rec.get("options") else int(rec.get("n_options", 4))


def letters(rec: dict) -> str:
    return "".join(chr(ord("A") + i) for i in range(n_options(rec)))


def _number(text: Any) -> float | None:
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    if not isinstance(text, str):
        return None
    t = text.strip().replace(",", "")
    m = _SCIENTIFIC.match(t)  # "1.20 x 10^4", "-2.7 × 10^-23"
    if m:
        return float(m.group(1)) * 10.0 ** int(m.group(2))
    m = _FRACTION.match(t)  # "1/12"
    if m and int(m.group(2)):
        return int(m.group(1)) / int(m.group(2))
    try:
        return float(t)
    except ValueError:
        return None


_FRACTION = re.compile(r"^([-+]?\d+)\s*/\s*(\d+)$")
_SCIENTIFIC = re.compile(r"^([-+]?\d+(?:\.\d+)?)\s*[x×*]\s*10\^\{?([-+]?\d+)\}?$")


def _same_option(extraction: str, option: Any) -> bool:
    a, b = extraction.strip().casefold(), str(option).strip().casefold()
    if a == b:
        return True
    x, y = _number(a), _number(b)
    return x is not None and y is not None and math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


_LETTER = re.compile(r"^\(?([A-Za-z])\)?[.:]?$")
_LETTER_AND_TEXT = re.compile(r"^\(([A-Z])\)\s*(.+?)\.?$")


def published_reading(rec: dict) -> Any:
    """The published extraction as a reading: a letter, a number, or None (no answer).

    A choice extraction that is a letter in range is that letter; one equal to an option's text (or
    value) is that option's letter; anything else (``N/A``, an empty string, text that is no
    option) is no answer.
    """
    pub = rec["published"]
    if rec["kind"] == "choice":
        if not isinstance(pub, str) or not pub.strip():
            return None
        m = _LETTER.match(pub.strip())
        if m and m.group(1).upper() in letters(rec):
            return m.group(1).upper()
        options = rec.get("options") or []
        m = _LETTER_AND_TEXT.match(pub.strip())  # "(B) Compound": the letter with its own option text
        if (
            m
            and m.group(1) in letters(rec)
            and options
            and _same_option(m.group(2), options[ord(m.group(1)) - 65])
        ):
            return m.group(1)
        matches = [i for i, opt in enumerate(options) if _same_option(pub, opt)]
        return chr(ord("A") + matches[0]) if len(matches) == 1 else None
    return _number(pub)


def graded_reading(entry: dict, kind: str) -> Any:
    """A grader's reading as a reading: a letter, a number, or None for refusal / unreadable."""
    reading = entry["reading"]
    if reading in NO_ANSWER:
        return None
    return reading if kind == "choice" else _number(reading)


# --- the reader -----------------------------------------------------------------------------------
def read(rec: dict) -> Parsed:
    """The reader's reading of a record's reply, asked as a run would ask it.

    Choice -> the ``choice`` answer type with ``n_options``, ``options`` and ``question``; integer
    -> ``count``; float -> ``distance`` (the reader's plain number, in metres when the reply names
    a length unit), or ``bearing`` when the reader finds only numbers with an angle's (or another
    kind's) unit ("90 degrees"). Context the reader does not use is ignored by it.
    """
    context: dict[str, Any] = {"question": rec.get("question")}
    if rec["kind"] == "choice":
        context.update(n_options=n_options(rec), options=rec.get("options"))
        return parse_answer(rec["reply"], "choice", **context)
    if rec["kind"] == "integer":
        return parse_answer(rec["reply"], "count", **context)
    parsed = parse_answer(rec["reply"], "distance", **context)
    if not parsed.ok and "distance unit" in parsed.reason:  # "90 degrees": the number of another kind
        angle = parse_answer(rec["reply"], "bearing", **context)
        return angle if angle.ok else parsed
    return parsed


def _is_count(value: float) -> bool:
    return value >= 0 and value == int(value)


def refuses_as_its_option(parsed: Parsed, expected: Any, rec: dict) -> bool:
    """A refusal read where the expected letter's option is itself a refusal ("(A) Unable to
    determine."): the scorer counts choosing that option as the refusal it is."""
    if rec["kind"] != "choice" or not parsed.refusal or not isinstance(expected, str) or len(expected) != 1:
        return False
    options = rec.get("options") or []
    index = ord(expected) - ord("A")
    return 0 <= index < len(options) and is_refusal(str(options[index]))


def agrees(parsed: Parsed, expected: Any, kind: str) -> bool:
    """Does the reading say what the expected reading says (None: that there is no answer)?

    An integer question answered with a fraction or a negative number ("7.026%", "-3 minutes per
    month") has no count in it: the count reader agrees by reading nothing.
    """
    if expected is None or (kind == "integer" and not _is_count(expected)):
        return not parsed.ok
    if not parsed.ok:
        return False
    if kind == "choice":
        return parsed.value == expected
    value = parsed.value
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    if math.isclose(value, expected, rel_tol=1e-6, abs_tol=1e-9):
        return True
    return kind == "float" and any(
        math.isclose(value, expected * f, rel_tol=1e-6, abs_tol=1e-12) for f in _UNIT_FACTORS
    )


@dataclass(frozen=True)
class Outcome:
    """One record compared: the reading, the published and the adjudicated expectations."""

    rec: dict
    parsed: Parsed
    published: Any
    expected: Any  # the grader's reading where there is one, else the published
    graded: bool  # a grader read this reply
    agrees_raw: bool
    agrees: bool


def compare(records: Iterable[dict], adjudicated: dict[str, dict] | None = None) -> Iterator[Outcome]:
    """Each record's reading against the published extraction and against the adjudicated one."""
    table = load_adjudicated() if adjudicated is None else adjudicated
    for rec in records:
        parsed = read(rec)
        pub = published_reading(rec)
        entry = table.get(rec["id"])
        expected = graded_reading(entry, rec["kind"]) if entry else pub
        yield Outcome(
            rec,
            parsed,
            pub,
            expected,
            entry is not None,
            agrees(parsed, pub, rec["kind"]) or refuses_as_its_option(parsed, pub, rec),
            agrees(parsed, expected, rec["kind"]) or refuses_as_its_option(parsed, expected, rec),
        )


def agreement(outcomes: Iterable[Outcome], raw: bool = False) -> float:
    """The share of outcomes whose reading agrees (with the published reading when ``raw``)."""
    flags = [o.agrees_raw if raw else o.agrees for o in outcomes]
    return sum(flags) / len(flags) if flags else float("nan")


# --- FRIEDA's published replies (cardinal / distance) -------------------------------------------
_DIRECTION_WORDS = {
    "north": "N",
    "south": "S",
    "east": "E",
    "west": "W",
    "northeast": "NE",
    "northwest": "NW",
    "southeast": "SE",
    "southwest": "SW",
}
_DISTANCE = re.compile(r"^(\d+(?:\.\d+)?)\s*([A-Za-z.]*?)\.?$")


def frieda_published(record: dict) -> Any:
    """FRIEDA's extraction as a reading when it is a bare direction or a bare distance, else None."""
    ans = str(record.get("extracted_ans") or "").strip().strip("\"'").strip()
    if record["answer_type"] == "cardinal":
        key = re.sub(r"^(to the )", "", ans.lower()).replace(" ", "").replace("-", "")
        return _DIRECTION_WORDS.get(key)
    m = _DISTANCE.match(ans.replace(",", ""))
    if not m:
        return None
    unit = m.group(2) or "m"
    factor = distance_unit_factor(unit)
    return None if factor is None else float(m.group(1)) * factor


def frieda_records() -> list[dict]:
    """FRIEDA's cardinal and distance records whose extraction is bare (see frieda_published)."""
    out = []
    for path in sorted(FRIEDA.glob("*.json")):
        for r in json.loads(path.read_text(encoding="utf-8")):
            if r.get("answer_type") not in ("cardinal", "distance"):
                continue
            expected = frieda_published(r)
            if expected is None:
                continue
            m = _DISTANCE.match(str(r.get("extracted_ans") or "").strip().strip("\"'").replace(",", ""))
            parts = r.get("_response") or []
            out.append(
                {
                    "source": "frieda",
                    "model": path.stem,
                    "id": f"frieda:{path.stem}:{r['question_ref']}",
                    "kind": r["answer_type"],
                    "question": r.get("question_text"),
                    "reply": "; ".join(str(p) for p in parts),
                    "expected": expected,
                    "unitless": bool(m) and not m.group(2),
                }
            )
    return out


def frieda_agrees(rec: dict) -> bool:
    """The reader's direction (8-point) or distance (metres, within 1e-6) equals FRIEDA's."""
    if rec["kind"] == "cardinal":
        parsed = parse_answer(rec["reply"], "direction8", question=rec["question"])
        return parsed.ok and parsed.value == rec["expected"]
    parsed = parse_answer(rec["reply"], "distance", question=rec["question"])
    if not parsed.ok:
        return False
    # an extraction without a unit ("300" from "300'") is the number as written: the reader's
    # metres agree when they are that number in some length unit
    factors = (1.0, *_UNIT_FACTORS) if rec.get("unitless") else (1.0,)
    return any(math.isclose(parsed.value, rec["expected"] * f, rel_tol=1e-6, abs_tol=1e-9) for f in factors)


# --- the command line -----------------------------------------------------------------------------
def _value(parsed: Parsed) -> str:
    if parsed.ok:
        return repr(parsed.value)
    return "refusal" if parsed.refusal else f"unparsed ({parsed.reason})"


def excerpt(reply: str, head: int = 240, tail: int = 360) -> str:
    """The start and the end of a reply, one line (where answers are)."""
    flat = reply.replace("\n", " / ")
    if len(flat) <= head + tail + 5:
        return flat
    return f"{flat[:head]} [...] {flat[-tail:]}"


def table(outcomes: list[Outcome]) -> str:
    """Agreement per source, per source and kind, and per source and model (raw and adjudicated)."""
    groups: dict[tuple, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        r = o.rec
        groups[("ALL", "", "")].append(o)
        groups[(r["source"], "", "")].append(o)
        groups[(r["source"], "kind", r["kind"])].append(o)
        groups[(r["source"], "model", r["model"])].append(o)
    lines = [f"{'group':58} {'n':>5} {'raw':>7} {'adjud.':>7} {'graded':>6}"]
    for key in sorted(groups, key=lambda k: (k[0] != "ALL", k[0], k[1] != "", k[1], k[2])):
        rows = groups[key]
        name = " / ".join(p for p in key if p)
        graded = sum(o.graded for o in rows)
        lines.append(
            f"{name:58} {len(rows):5d} {agreement(rows, raw=True):7.1%} {agreement(rows):7.1%} {graded:6d}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the agreement table and some disagreements."""
    ap = argparse.ArgumentParser(description="The reader on real replies: agreement with published readings.")
    ap.add_argument("--show", type=int, default=0, help="print N disagreements (a seeded sample)")
    ap.add_argument("--source", action="append", help="only this source (repeatable)")
    ap.add_argument("--model", help="only models whose name contains this")
    ap.add_argument("--kind", choices=KINDS, help="only this kind")
    ap.add_argument("--raw", action="store_true", help="disagreements with the published extraction")
    ap.add_argument("--ungraded", action="store_true", help="only disagreements no grader has read")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample of disagreements shown")
    ap.add_argument("--frieda", action="store_true", help="also FRIEDA's cardinal/distance replies")
    ap.add_argument("--classes", action="store_true", help="count disagreements by the grader's class")
    args = ap.parse_args(argv)
    records = load(args.source)
    if args.model:
        records = [r for r in records if args.model in r["model"]]
    if args.kind:
        records = [r for r in records if r["kind"] == args.kind]
    outcomes = list(compare(records))
    print(table(outcomes))
    if args.frieda:
        if FRIEDA.is_dir():
            fr = frieda_records()
            by_kind = Counter(r["kind"] for r in fr)
            ok = Counter(r["kind"] for r in fr if frieda_agrees(r))
            for kind in sorted(by_kind):
                print(f"frieda / {kind:51} {by_kind[kind]:5d} {ok[kind] / by_kind[kind]:7.1%}")
        else:
            print(f"frieda: {FRIEDA} is absent")
    bad = [o for o in outcomes if not (o.agrees_raw if args.raw else o.agrees)]
    if args.ungraded:
        bad = [o for o in bad if not o.graded]
    print(f"\n{len(bad)} disagreements" + (" (raw)" if args.raw else ""))
    graded = load_adjudicated()
    if args.classes:
        classes = Counter(graded.get(o.rec["id"], {}).get("class", "(not graded)") for o in bad)
        for name, n in classes.most_common():
            print(f"{n:6d}  {name}")
    for o in random.Random(args.seed).sample(bad, min(args.show, len(bad))):
        r = o.rec
        opts = f" options={r['options']}" if r.get("options") else ""
        print(f"\n--- {r['id']} [{r['kind']}]{opts}")
        print(f"    published={r['published']!r} -> {o.published!r}; expected={o.expected!r}")
        print(f"    reader={_value(o.parsed)}")
        if o.graded:
            print(f"    grader: {graded[r['id']]['reading']} -- {graded[r['id']]['why']}")
        print(f"    {excerpt(r['reply'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
