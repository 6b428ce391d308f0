"""`spatialgap gate RESULTS --thresholds FILE [--override-reason TEXT]`: a release gate on chosen
summary cells. A blocked gate exits 1; an override needs a reason and is recorded.

Thresholds file (TOML or JSON), one rule per `[[rule]]`:

    [[rule]]
    name = "metric p10 error"                  # optional label
    level = "family"                           # overall | city | family | relation
    where = {model = "tools", modality = "geojson", form = "open", family = "metric"}
    metric = "quality_p10"                     # any summary cell field (accuracy, ci_low, parse_rate, ...)
    max = 1.0                                  # and/or min = ...

A rule matching no cell blocks the gate (a gate that silently checks nothing is no gate). Every
decision is appended to RESULTS/gate.jsonl and stored as summary.json["gate"].
"""

from __future__ import annotations

import datetime as _dt
import getpass
import json
import tomllib
from pathlib import Path

from scoring.errors import InputError, OutputError
from scoring.score.results import load_results
from scoring.score.tables import CSV_FIELDS


def load_thresholds(path) -> list[dict]:
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{p}: cannot read ({exc.strerror})") from None
    try:
        data = json.loads(raw) if p.suffix.lower() == ".json" else tomllib.loads(raw)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise InputError(
            f"{p}: not valid {'JSON' if p.suffix.lower() == '.json' else 'TOML'} ({exc})"
        ) from None
    rules = data.get("rule") if isinstance(data, dict) else None
    if not isinstance(rules, list) or not rules:
        raise InputError(f"{p}: no [[rule]] entries")
    for i, r in enumerate(rules, 1):
        if not isinstance(r, dict):
            raise InputError(f"{p}: rule {i} is not a table")
        if r.get("level", "overall") not in ("overall", "city", "family", "relation"):
            raise InputError(f"{p}: rule {i}: level must be overall, city, family or relation")
        if r.get("metric") not in CSV_FIELDS or r.get("metric") in (
            "level",
            "model",
            "modality",
            "form",
            "city",
            "family",
            "relation",
            "ci_method",
        ):
            raise InputError(
                f"{p}: rule {i}: metric must be a numeric summary field, got {r.get('metric')!r}"
            )
        if "min" not in r and "max" not in r:
            raise InputError(f"{p}: rule {i}: needs min or max")
        for k in ("min", "max"):
            if k in r and (isinstance(r[k], bool) or not isinstance(r[k], (int, float))):
                raise InputError(f"{p}: rule {i}: {k} must be a number")
        if not isinstance(r.get("where", {}), dict):
            raise InputError(f"{p}: rule {i}: where must be a table")
    return rules


def evaluate_gate(summary: dict, rules: list[dict]) -> list[dict]:
    """One check per (rule, matching cell); a rule matching nothing gives one failed check."""
    checks = []
    for i, rule in enumerate(rules, 1):
        level = rule.get("level", "overall")
        where = rule.get("where", {})
        name = rule.get("name") or f"rule {i}"
        cells = [
            c
            for c in summary.get("cells", [])
            if c.get("level") == level and all(str(c.get(k)) == str(v) for k, v in where.items())
        ]
        if not cells:
            checks.append(
                {
                    "rule": name,
                    "cell": where,
                    "metric": rule["metric"],
                    "value": None,
                    "passed": False,
                    "why": "no cell matches",
                }
            )
            continue
        for c in cells:
            v = c.get(rule["metric"])
            ok = (
                v is not None
                and ("min" not in rule or v >= rule["min"])
                and ("max" not in rule or v <= rule["max"])
            )
            bound = " and ".join(
                f"{'>=' if k == 'min' else '<='} {rule[k]}" for k in ("min", "max") if k in rule
            )
            checks.append(
                {
                    "rule": name,
                    "cell": {
                        k: c.get(k)
                        for k in ("level", "model", "modality", "form", "city", "family", "relation")
                        if c.get(k)
                    },
                    "metric": rule["metric"],
                    "value": v,
                    "passed": bool(ok),
                    "why": f"{rule['metric']} = {v} (needs {bound})",
                }
            )
    return checks


def run_gate(results_dir, thresholds, override_reason: str | None = None) -> dict:
    """Evaluate the gate, record the decision in RESULTS, return it (`passed` is the outcome)."""
    if override_reason is not None and not override_reason.strip():
        raise InputError("--override-reason: a reason is required (empty given)")
    summary, _ = load_results(results_dir)
    rules = load_thresholds(thresholds)
    checks = evaluate_gate(summary, rules)
    blocked = [c for c in checks if not c["passed"]]
    decision = {
        "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "thresholds": str(Path(thresholds).resolve()),
        "checks": checks,
        "blocked": bool(blocked),
        "overridden": bool(blocked and override_reason),
        "override_reason": override_reason.strip() if (blocked and override_reason) else None,
        "override_by": _user() if (blocked and override_reason) else None,
    }
    decision["passed"] = not blocked or decision["overridden"]
    d = Path(results_dir)
    try:
        with open(d / "gate.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(decision, ensure_ascii=False) + "\n")
        summary["gate"] = decision
        tmp = d / ".summary.json.tmp"
        tmp.write_text(json.dumps(summary, indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(d / "summary.json")
    except OSError as exc:
        raise OutputError(f"{d}: cannot record the gate decision ({exc.strerror})") from None
    return decision


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
