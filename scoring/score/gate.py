"""`spatialgap gate RESULTS --thresholds FILE [--override-reason TEXT]`: a release gate on chosen
summary cells. A blocked gate exits 1; an override needs a reason and is recorded. Results whose
selfcheck failed or was not run are refused, and no override passes them (their numbers are not
known to come from a scorer that reads replies as intended).

Thresholds file (TOML or JSON), one rule per `[[rule]]`:

    [[rule]]
    name = "metric worst-decile error"         # optional label
    level = "family"                           # overall | city | family | relation
    where = {model = "tools", modality = "geojson", form = "open", family = "metric"}
    metric = "abs_error_p90"                   # any numeric summary cell field (accuracy, ci_low, ...)
    max = 1.0                                  # and/or min = ...

A rule matching no cell blocks the gate (a gate that silently checks nothing is no gate). Every
decision is appended to RESULTS/gate.jsonl and stored as summary.json["gate"].
`propose_thresholds` derives rules from past results; `list_overrides` reads the overrides back.
"""

from __future__ import annotations

import datetime as _dt
import getpass
import json
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any

from scoring.build.blind import failing, figures_of_record
from scoring.errors import InputError, OutputError
from scoring.score.results import load_results
from scoring.score.tables import CSV_FIELDS, RENAMED
from scoring.support.files import write_atomic, write_json_atomic

KEY_FIELDS = ("level", "model", "modality", "form", "city", "family", "relation")
NUMERIC_FIELDS = tuple(f for f in CSV_FIELDS if f not in KEY_FIELDS + ("ci_method",))
MIN_PAST_RESULTS = 5
# Higher-is-better rates a proposal may put a floor under (median of past results - regression).
PROPOSABLE = ("accuracy", "raster_tolerant_rate", "parse_rate", "answerable_only_accuracy")


def load_thresholds(path: str | Path) -> list[dict]:
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
        if r.get("metric") in RENAMED:
            raise InputError(f"{p}: rule {i}: metric {r['metric']} was renamed: use {RENAMED[r['metric']]}")
        if r.get("metric") not in NUMERIC_FIELDS:
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


def selfcheck_check(summary: dict) -> dict:
    """The gate's own check that the results were scored by a scorer that passed its selfcheck."""
    sc = summary.get("selfcheck")
    if sc is None:
        why = "selfcheck not run when these results were scored"
    elif not sc.get("passed"):
        why = f"selfcheck FAILED ({len(sc.get('messages') or [])} drifted)"
    else:
        why = "selfcheck passed"
    return {
        "rule": "selfcheck",
        "cell": {},
        "metric": "selfcheck",
        "value": None,
        "passed": why == "selfcheck passed",
        "why": why,
    }


def options_only_check(summary: dict) -> dict | None:
    """The gate's check that the benchmark's options give nothing away: fails when the build's
    options-only baseline (scoring.build.blind) is above guessing by more than its documented
    margin on a relation or overall. None for a benchmark built before the baseline existed."""
    record = (summary.get("benchmark") or {}).get("options_only")
    if not record:
        return None
    complaints = failing(figures_of_record(record))
    return {
        "rule": "options-only",
        "cell": {},
        "metric": "options_only_accuracy",
        "value": None,
        "passed": not complaints,
        "why": "; ".join(complaints) or "no relation's options-only accuracy above guessing by the margin",
    }


def run_gate(results_dir: str | Path, thresholds: str | Path, override_reason: str | None = None) -> dict:
    """Evaluate the gate, record the decision in RESULTS, return it (`passed` is the outcome).
    A failed or missing selfcheck blocks, and an override cannot pass it (`refused`)."""
    if override_reason is not None and not override_reason.strip():
        raise InputError("--override-reason: a reason is required (empty given)")
    summary, _ = load_results(results_dir)
    rules = load_thresholds(thresholds)
    sc = selfcheck_check(summary)
    blind = options_only_check(summary)
    checks = [sc, *([blind] if blind else []), *evaluate_gate(summary, rules)]
    blocked = [c for c in checks if not c["passed"]]
    overridden = bool(blocked and override_reason and sc["passed"])
    decision = {
        "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "thresholds": str(Path(thresholds).resolve()),
        "checks": checks,
        "blocked": bool(blocked),
        "refused": not sc["passed"],
        "overridden": overridden,
        "override_reason": override_reason.strip() if overridden and override_reason else None,
        "override_by": _user() if overridden else None,
    }
    decision["passed"] = not blocked or overridden
    d = Path(results_dir)
    try:
        with open(d / "gate.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(decision, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise OutputError(f"{d}: cannot record the gate decision ({exc.strerror})") from None
    summary["gate"] = decision
    write_json_atomic(d / "summary.json", summary, indent=1)
    return decision


def tenth_percentile(values: list[float]) -> float:
    """The 10th percentile of `values` (linear between the order statistics)."""
    s = sorted(values)
    pos = 0.1 * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def propose_thresholds(
    results_dirs: list,
    *,
    allowed_regression: float = 0.05,
    metrics: tuple[str, ...] = ("accuracy",),
    levels: tuple[str, ...] = ("overall", "family"),
) -> list[dict]:
    """Rules `metric >= tenth percentile over past results - allowed_regression` for every cell
    (of the given levels) present in at least five of the results: a floor set where the past
    results' worst tenth lay, not at their middle, so that one ordinary bad run does not block.
    Results whose selfcheck failed or was not run are refused as a basis."""
    if len(results_dirs) < MIN_PAST_RESULTS:
        raise InputError(f"--propose needs at least {MIN_PAST_RESULTS} past results, got {len(results_dirs)}")
    if not 0 <= allowed_regression < 1:
        raise InputError(f"--allowed-regression must be in [0, 1), got {allowed_regression}")
    for m in metrics:
        if m not in PROPOSABLE:
            raise InputError(f"--propose: metric must be one of {', '.join(PROPOSABLE)}, got {m!r}")
    values: defaultdict[tuple, list[float]] = defaultdict(list)
    for d in results_dirs:
        summary, _ = load_results(d)
        sc = selfcheck_check(summary)
        if not sc["passed"]:
            raise InputError(f"{d}: {sc['why']}: not a basis for thresholds")
        for c in summary.get("cells", []):
            if c.get("level") not in levels:
                continue
            where = tuple((k, c[k]) for k in KEY_FIELDS[1:] if c.get(k))
            for m in metrics:
                if c.get(m) is not None:
                    values[(c["level"], where, m)].append(float(c[m]))
    rules = []
    for (level, where, metric), vals in sorted(values.items()):
        if len(vals) < MIN_PAST_RESULTS:
            continue
        p10 = tenth_percentile(vals)
        rules.append(
            {
                "name": f"{metric} of {' · '.join(v for _, v in where)} ({level}): "
                f"tenth percentile of {len(vals)} past results {p10:.4f} - {allowed_regression}",
                "level": level,
                "where": dict(where),
                "metric": metric,
                "min": round(max(0.0, p10 - allowed_regression), 6),
            }
        )
    if not rules:
        raise InputError(f"--propose: no cell is present in {MIN_PAST_RESULTS} or more of the results")
    return rules


def _toml_value(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    return repr(v)


def write_thresholds(path: str | Path, rules: list[dict], header: str = "") -> Path:
    """Write rules as a thresholds TOML file (atomic)."""
    lines = [f"# {line}" for line in header.splitlines()]
    for r in rules:
        lines += ["", "[[rule]]", *(f"{k} = {_toml_value(v)}" for k, v in r.items())]
    p = Path(path)
    write_atomic(p, "\n".join(lines).lstrip("\n") + "\n")
    return p


def list_overrides(results_dirs: list) -> list[dict]:
    """Every recorded override (time, results, reason, who, the checks it passed over)."""
    out = []
    for d in map(Path, results_dirs):
        log = d / "gate.jsonl"
        if not log.is_file():
            continue
        for i, line in enumerate(log.read_text(encoding="utf-8").splitlines(), 1):
            try:
                rec = json.loads(line)
            except ValueError:
                raise InputError(f"{log}:{i}: not JSON") from None
            if rec.get("overridden"):
                out.append(
                    {
                        "time": rec.get("time"),
                        "results": str(d),
                        "reason": rec.get("override_reason"),
                        "by": rec.get("override_by"),
                        "thresholds": rec.get("thresholds"),
                        "blocked": [c for c in rec.get("checks", []) if not c.get("passed")],
                    }
                )
    return sorted(out, key=lambda r: r["time"] or "")


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
