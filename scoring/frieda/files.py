"""FRIEDA result files: reading them, scoring every record, the summary and its breakdowns."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scoring.errors import InputError, OutputError
from scoring.frieda.compare import disagreement_cause
from scoring.frieda.published import RULE_SETS, score_by
from scoring.frieda.rules import TOLERANCE, Judge
from scoring.frieda.stats import frieda_statistics

_MAX_EXAMPLES = 5
# Categorical fields a FRIEDA dataset may carry beyond the published records' own (FRIEDA's question
# bank: map elements, domain, annotator agreement); a breakdown per field present in the records.
EXTRA_MISSED_KEYS = ("file", "question_ref", "answer_type", "reason")
_LISTED = ("distance", "cardinal")  # answer types whose unreproduced records --rules frieda lists
EXTRA_CATEGORIES = ("map_element", "map_elements", "domain", "annotator_agreement", "agreement")
_MISSED_KEYS = ("file", "question_ref", "answer_type", "reason")
_LISTED = ("distance", "cardinal")  # answer types whose unreproduced records --rules frieda lists
_CATEGORIES = ("answer_type", "spatial_relationship", "map_count", *EXTRA_CATEGORIES)


def _load(path: Path) -> list:
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        with path.open("r", encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc.__class__.__name__})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON (line {exc.lineno})") from None
    except ValueError:  # valid JSON Python will not read: a number of more than 4300 digits
        raise InputError(f"{path}: holds a number too long to read") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply to read") from None
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of FRIEDA records")
    return data


def _expand(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(p.glob("*.json"))
            if not found:
                raise InputError(f"{p}: directory holds no .json files")
            out.extend(found)
        else:
            out.append(p)
    if not out:
        raise InputError("no input files")
    return out


def model_of(path: Path) -> tuple[str, str]:
    """(model, setting) from a file name such as ``gpt5__gpt5_w_contextual.json``."""
    stem = path.stem
    m = re.match(r"(?P<model>.+?)_(?P<setting>wo?_contextual)$", stem)
    if m:
        model = m.group("model")
        return (model.split("__", 1)[1] if "__" in model else model), m.group("setting")
    return stem, ""


class _Tally:
    def __init__(self) -> None:
        self.n = 0
        self.ours = 0
        self.orig = 0
        self.parsed = 0
        self.agree = 0

    def add(self, ours: dict, original: bool) -> None:
        self.n += 1
        self.ours += ours["verdict"] == "correct"
        self.parsed += ours["verdict"] != "unparsed"
        self.orig += bool(original)
        self.agree += (ours["verdict"] == "correct") == bool(original)

    def as_dict(self) -> dict:
        n = self.n or 1
        return {
            "n": self.n,
            "accuracy": round(self.ours / n, 4),
            "original_accuracy": round(self.orig / n, 4),
            "parse_rate": round(self.parsed / n, 4),
            "agreement": round(self.agree / n, 4),
        }


def _breakdowns() -> dict:
    return {"overall": _Tally(), **{f"by_{c}": defaultdict(_Tally) for c in _CATEGORIES}}


def _values(rec: dict, field: str) -> list[str]:
    """The record's categories in `field`: a list counts toward each of its distinct items."""
    v = rec.get(field)
    if isinstance(v, (list, tuple)):
        return sorted({str(x) for x in v}) or ["None"]
    return [str(v)]


def _add(b: dict, rec: dict, ours: dict, original: bool) -> None:
    b["overall"].add(ours, original)
    for c in _CATEGORIES:
        if c in EXTRA_CATEGORIES and c not in rec:
            continue
        for v in _values(rec, c):
            b[f"by_{c}"][v].add(ours, original)


def _render(b: dict) -> dict:
    out = b["overall"].as_dict()
    for c in _CATEGORIES:
        key = f"by_{c}"
        if c not in EXTRA_CATEGORIES or b[key]:  # an extra field only when some record has it
            out[key] = {k: t.as_dict() for k, t in sorted(b[key].items())}
    return out


def _by_count(causes: dict[str, dict]) -> dict[str, dict]:
    """Disagreement causes, the most frequent first."""
    return dict(sorted(causes.items(), key=lambda item: -int(item[1]["count"])))


def score_files(
    paths: Iterable[str | Path], out_dir: str | Path, judge: Judge | None = None, rules: str = RULE_SETS[0]
) -> dict:
    """Score FRIEDA result files; write ``verdicts.jsonl`` and ``summary.json`` to ``out_dir``.

    Returns the summary: ``{"tolerance", "files": {name: {...}}, "overall": {...}}`` where each
    entry has n, accuracy, original_accuracy, parse_rate, agreement, the same by answer type,
    spatial relationship and map count, judge_used, and disagreements grouped by cause
    (``{cause: {"count", "ours_correct", "original_correct", "examples": [question_ref, ...]}}``);
    ``statistics``: MAPE, Cohen's kappa, McNemar pairs, direct/contextual agreement (``stats``).
    ``rules`` names the rule set (``spatialgap``: ours; ``frieda``: the published verdicts' own);
    under ``frieda`` the summary lists every distance and cardinal record it does not reproduce.
    """
    if rules not in RULE_SETS:
        raise InputError(f"--rules: unknown rule set {rules!r} (expected {' or '.join(RULE_SETS)})")
    loaded = [(p, _load(p)) for p in _expand(paths)]  # fail on bad input before writing anything
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fh = (out_dir / "verdicts.jsonl").open("w", encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{out_dir}: cannot write ({exc.strerror or exc.__class__.__name__})") from None
    summary: dict[str, Any] = {"rules": rules, "tolerance": TOLERANCE, "files": {}}
    tally = _Sweep(rules)
    with fh:
        for path, records in loaded:
            model, setting = model_of(path)
            b = _breakdowns()
            causes: dict[str, dict] = {}
            judged = 0
            for rec in records:
                line = tally.score(path, model, setting, rec, judge, b, causes)
                judged += line["judge_used"]
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
            summary["files"][path.name] = {
                "model": model,
                "setting": setting,
                **_render(b),
                "judge_used": judged,
                "disagreements": _by_count(causes),
            }
    summary["overall"] = {**_render(tally.total), "disagreements": _by_count(tally.causes)}
    summary["statistics"] = frieda_statistics(tally.lines)
    if rules != RULE_SETS[0]:
        summary["unreproduced"] = tally.unreproduced
    try:
        (out_dir / "summary.json").write_text(
            json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    except OSError as exc:
        raise OutputError(f"{out_dir / 'summary.json'}: cannot write ({exc.strerror})") from None
    return summary


class _Sweep:
    """What score_files adds up over every file: the overall breakdowns and causes, every
    verdict line (for the statistics) and, under FRIEDA's rules, the records not reproduced."""

    def __init__(self, rules: str) -> None:
        self.rules = rules
        self.total = _breakdowns()
        self.causes: dict[str, dict] = {}
        self.lines: list[dict] = []
        self.unreproduced: list[dict] = []

    def score(
        self,
        path: Path,
        model: str,
        setting: str,
        rec: Any,
        judge: Judge | None,
        b: dict,
        causes: dict[str, dict],
    ) -> dict:
        """The verdict line of one record, counted in the file's and the overall tallies."""
        if not isinstance(rec, dict):
            rec = {"question_ref": None, "_malformed": True}
        ours = score_by(self.rules, rec, judge)
        original = rec.get("correct") is True
        _add(b, rec, ours, original)
        _add(self.total, rec, ours, original)
        agrees = (ours["verdict"] == "correct") == original
        line = {
            "file": path.name,
            "model": model,
            "setting": setting,
            "question_ref": rec.get("question_ref"),
            "answer_type": rec.get("answer_type"),
            "spatial_relationship": rec.get("spatial_relationship"),
            "map_count": rec.get("map_count"),
            "verdict": ours["verdict"],
            "reason": ours["reason"],
            "judge_used": ours.get("judge_used", False),
            "original_correct": original,
            "agrees_with_original": agrees,
        }
        line.update({c: rec[c] for c in EXTRA_CATEGORIES if c in rec})
        for key in ("response_value", "expected_value"):  # distances, for MAPE
            if key in ours:
                line[key] = ours[key]
        self.lines.append(line)
        if not agrees:
            if self.rules != RULE_SETS[0] and rec.get("answer_type") in _LISTED:
                self.unreproduced.append({k: line[k] for k in _MISSED_KEYS})
            why = disagreement_cause(rec, ours) if self.rules == RULE_SETS[0] else "not reproduced"
            for table in (causes, self.causes):
                _count_cause(table, f"{rec.get('answer_type')}: {why}", rec, ours, original)
        return line


def _count_cause(table: dict[str, dict], cause: str, rec: dict, ours: dict, original: bool) -> None:
    c = table.setdefault(cause, {"count": 0, "ours_correct": 0, "original_correct": 0, "examples": []})
    c["count"] += 1
    c["ours_correct"] += ours["verdict"] == "correct"
    c["original_correct"] += original
    ref = rec.get("question_ref")
    if ref is not None and len(c["examples"]) < _MAX_EXAMPLES and ref not in c["examples"]:
        c["examples"].append(ref)
